import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinModels } from '../../src/domain/builtin-catalogue.ts';
import { avatarKind, validateAvatar } from '../../src/domain/kinds/avatar.kind.ts';
import { validateSpeech } from '../../src/domain/kinds/speech.kind.ts';
import { validateVideo } from '../../src/domain/kinds/video.kind.ts';
import type {
  AvatarModel,
  ModelDefinition,
  SpeechModel,
  VideoModel,
} from '../../src/domain/model.ts';
import { priceOf } from '../../src/domain/model.ts';
import { presentReferences, priceOfSettings } from '../helpers/kinds.ts';

// The rules of the video, speech and avatar kinds (image: image-settings.test.ts), pure.
const model = <M extends ModelDefinition>(id: string) =>
  builtinModels.find((m) => m.modelId === id) as M;
const motion = model<VideoModel>('mdl_atelier-motion');
const voice = model<SpeechModel>('mdl_atelier-voice');
const avatar = model<AvatarModel>('mdl_atelier-avatar');
const seed = () => 7;
const problems = (r: { ok: boolean; problems?: readonly { field: string; code: string }[] }) =>
  (r.problems ?? []).map((p) => `${p.field} ${p.code}`);

describe('pricing rules', () => {
  it('charges every started block of `per` units', () => {
    const perHundred = { ...voice, pricing: { ...voice.pricing, credits: 3, per: 100 } };
    assert.equal(priceOf(perHundred, 1), 3);
    assert.equal(priceOf(perHundred, 100), 3);
    assert.equal(priceOf(perHundred, 101), 6);
  });

  it('a per-request price ignores the quantity', () => {
    const perRequest = { ...motion, pricing: { ...motion.pricing, unit: 'request' as const } };
    assert.equal(priceOf(perRequest, 1), 2);
    assert.equal(priceOf(perRequest, 40), 2);
  });
});

describe('video settings', () => {
  it('defaults to text mode, the first format and the model’s duration; priced per second', async () => {
    const r = validateVideo(motion, { prompt: 'waves' }, seed);
    assert.ok(r.ok);
    assert.equal(r.settings.mode, 'text');
    assert.deepEqual([r.settings.resolution, r.settings.aspectRatio], ['720p', '16:9']);
    assert.equal(r.settings.durationSeconds, 5);
    assert.equal(await priceOfSettings(motion, r.settings), 10);
  });

  it('an image makes it image-to-video', () => {
    const r = validateVideo(motion, { prompt: 'x', imageMediaId: 'med_1' }, seed);
    assert.ok(r.ok);
    assert.equal(r.settings.mode, 'image');
  });

  it('a duration beyond the chosen format is unsupported (120002), bad types invalid (120001)', () => {
    const long = validateVideo(
      motion,
      { prompt: 'x', resolution: '1080p', durationSeconds: 6 },
      seed,
    );
    assert.deepEqual(problems(long), ['durationSeconds 120002']);
    const bad = validateVideo(motion, { prompt: 'x', durationSeconds: 'ten' }, seed);
    assert.deepEqual(problems(bad), ['durationSeconds 120001']);
    const unknown = validateVideo(motion, { prompt: 'x', resolution: '4k' }, seed);
    assert.deepEqual(problems(unknown), ['resolution 120002']);
  });
});

describe('speech settings', () => {
  it('needs a voice; defaults to normal speed and pitch and the first format', () => {
    const r = validateSpeech(voice, { text: ' hello ', voiceModelId: 'vm_en' });
    assert.ok(r.ok);
    assert.deepEqual(r.settings, {
      text: 'hello',
      voiceModelId: 'vm_en',
      speed: 1,
      pitch: 1,
      format: 'mp3',
    });
    assert.deepEqual(problems(validateSpeech(voice, { text: 'x' })), ['voiceModelId 120001']);
  });

  it('speed, pitch and format outside the model are unsupported', () => {
    const r = validateSpeech(voice, {
      text: 'x',
      voiceModelId: 'vm_en',
      speed: 3,
      pitch: 0.1,
      format: 'flac',
    });
    assert.deepEqual(problems(r), ['speed 120002', 'pitch 120002', 'format 120002']);
  });

  it('is priced per started 100 characters', async () => {
    const r = validateSpeech(voice, { text: 'a'.repeat(101), voiceModelId: 'vm_en' });
    assert.ok(r.ok);
    assert.equal(await priceOfSettings(voice, r.settings), 2);
  });
});

describe('avatar settings', () => {
  it('takes either a script or an audio, never both or neither', () => {
    const both = validateAvatar(avatar, {
      avatarId: 'ava_1',
      script: 'hi',
      audioMediaId: 'med_1',
    });
    assert.deepEqual(problems(both), ['script 120001']);
    assert.deepEqual(problems(validateAvatar(avatar, { avatarId: 'ava_1' })), ['script 120001']);
    const audioWithVoice = validateAvatar(avatar, {
      avatarId: 'ava_1',
      audioMediaId: 'med_1',
      voiceModelId: 'vm_en',
    });
    assert.deepEqual(problems(audioWithVoice), ['voiceModelId 120001']);
  });

  it('a resolution the model lacks is unsupported; the default is the first', () => {
    const r = validateAvatar(avatar, { avatarId: 'ava_1', script: 'hi' });
    assert.ok(r.ok);
    assert.deepEqual([r.settings.resolution, r.settings.fps], ['512p', 25]);
    const big = validateAvatar(avatar, {
      avatarId: 'ava_1',
      script: 'hi',
      resolution: '1080p',
    });
    assert.deepEqual(problems(big), ['resolution 120002']);
  });

  it('a script is priced by its estimated spoken length, an audio by its own, with grace', async () => {
    const r = validateAvatar(avatar, { avatarId: 'ava_1', script: 'a'.repeat(31) });
    assert.ok(r.ok);
    assert.equal(await priceOfSettings(avatar, r.settings), 3);
    const audio = validateAvatar(avatar, { avatarId: 'ava_1', audioMediaId: 'med_1' });
    assert.ok(audio.ok);
    assert.equal(await priceOfSettings(avatar, audio.settings, 2_050), 2);
    assert.equal(await priceOfSettings(avatar, audio.settings, 2_150), 3);
    assert.equal(await priceOfSettings(avatar, audio.settings, 0), 1);
  });
});

describe('reading a request by its kind’s fields', () => {
  it('names a field the kind does not take, and lets nulls and the common fields through', () => {
    const r = validateSpeech(voice, {
      text: 'hi',
      voiceModelId: 'vm_en',
      prompt: 'not speech',
      pitch: null,
      modelId: 'mdl_atelier-voice',
      idempotencyKey: 'k',
    });
    assert.deepEqual(problems(r), ['prompt 120001']);
    assert.ok(!r.ok && (r.problems[0]!.allowed as string[]).includes('voiceModelId'));
  });
});

describe('an avatar script’s voice', () => {
  const references = (avatarVoice: string | null) => {
    const checked: string[] = [];
    return {
      checked,
      checks: {
        ...presentReferences(),
        avatar: async () => ({ voiceModelId: avatarVoice }),
        voice: async (id: string) => {
          checked.push(id);
        },
      },
    };
  };
  const speaker = async (given: string | undefined, avatarVoice: string | null) => {
    const r = validateAvatar(avatar, { avatarId: 'ava_1', script: 'hi', voiceModelId: given });
    assert.ok(r.ok);
    const { checks, checked } = references(avatarVoice);
    const resolved = await avatarKind.resolve(avatar, r.settings, checks);
    assert.deepEqual(checked, [resolved.settings.voiceModelId], 'the voice spoken is checked');
    return resolved.settings.voiceModelId;
  };

  it('is the given one, else the avatar’s, else the default', async () => {
    assert.equal(await speaker('voc_given', 'voc_avatars'), 'voc_given');
    assert.equal(await speaker(undefined, 'voc_avatars'), 'voc_avatars');
    assert.equal(await speaker(undefined, null), 'voc_en-us');
  });
});
