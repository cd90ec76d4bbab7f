import { AppError, ErrorCode } from '../../shared/errors.ts';
import type { AvatarModel } from '../model.ts';
import { type FieldTable, SettingsReader } from './fields.ts';
import type { KindModule } from './kind.ts';

/** A validated talking-avatar request. Exactly one of `script` and `audioMediaId` is set. */
export interface AvatarSettings {
  readonly avatarId: string;
  readonly script: string | null;
  /** The voice that speaks the script: the given one, else the avatar's (filled in on submission). */
  readonly voiceModelId: string | null;
  readonly audioMediaId: string | null;
  readonly resolution: string;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
}

/** What the engine is given besides the settings. */
export interface AvatarInputs {
  readonly portrait: Buffer;
  /** The engine's voice that speaks `settings.script`; null with an uploaded audio. */
  readonly voice: string | null;
  /** The uploaded audio; null with a script. */
  readonly audio: Buffer | null;
}

const fields = {
  avatarId: {
    type: 'id',
    required: true,
    description: 'An avatar of the account, from the avatar list.',
  },
  script: {
    type: 'string',
    description:
      "Either a script spoken with the avatar's (or the given) voice, or an uploaded audio.",
  },
  voiceModelId: { type: 'id', description: 'Speaks the script instead of the avatar’s voice.' },
  audioMediaId: { type: 'id', description: 'An audio of the account, instead of a script.' },
  resolution: { type: 'string', description: 'One of the model’s resolutions.' },
} as const satisfies FieldTable;

/** The voice of a script when neither the request nor the avatar names one. */
const defaultVoice = 'voc_en-us';

/** Checks a raw avatar request against the model; the avatar, voice and audio are references. */
export function validateAvatar(model: AvatarModel, raw: Readonly<Record<string, unknown>>) {
  const caps = model.capabilities;
  const read = new SettingsReader(raw, fields);
  const avatarId = read.requiredId('avatarId');
  const givenScript = read.string('script');
  const audioMediaId = read.id('audioMediaId') ?? null;
  const voiceModelId = read.id('voiceModelId') ?? null;
  let script: string | null = null;
  if ((givenScript === undefined) === (audioMediaId === null)) {
    read.invalid('script', 'give either a script or an audioMediaId');
  } else if (givenScript !== undefined) {
    script = read.text('script', caps.maxScriptLength);
  } else if (voiceModelId !== null) {
    read.invalid('voiceModelId', 'only speaks a script; an uploaded audio has its own voice');
  }
  const resolutionName = read.string('resolution');
  const resolution =
    resolutionName === undefined
      ? caps.resolutions[0]
      : caps.resolutions.find((r) => r.resolution === resolutionName);
  if (resolution === undefined) {
    read.unsupported(
      'resolution',
      `"${resolutionName}" is not offered by this model`,
      caps.resolutions.map((r) => r.resolution),
    );
  }
  return read.result<AvatarSettings>(() => ({
    avatarId: avatarId!,
    script,
    voiceModelId,
    audioMediaId,
    resolution: resolution!.resolution,
    width: resolution!.width,
    height: resolution!.height,
    fps: caps.fps,
  }));
}

/** An encoder's padding (MP3 adds ~50 ms) does not cost a second. */
const audioGraceMs = 100;

/**
 * Seconds a request is priced for: an uploaded audio's length, or a script's estimated spoken
 * length (the model's characters per second), whole seconds rounded up.
 */
export function avatarSeconds(
  model: AvatarModel,
  settings: AvatarSettings,
  audioDurationMs: number | null,
): number {
  if (settings.script !== null) {
    return Math.max(1, Math.ceil(settings.script.length / model.capabilities.charactersPerSecond));
  }
  return Math.max(1, Math.ceil(((audioDurationMs ?? 0) - audioGraceMs) / 1000));
}

/** Talking avatars: priced per second of the spoken script or the uploaded audio. */
export const avatarKind: KindModule<'avatar', AvatarSettings, AvatarInputs> = {
  kind: 'avatar',
  names: {
    mutation: 'generateAvatarVideo',
    inputType: 'GenerateAvatarVideoInput',
    tool: 'generate_avatar_video',
  },
  title: 'Generate a talking-avatar video',
  summary:
    'a talking-avatar video (MP4 with sound) of an avatar of the account, speaking a script or an uploaded audio',
  fields,
  validate: validateAvatar,
  async resolve(model, given, references) {
    let audioMs: number | null = null;
    if (given.audioMediaId !== null) {
      audioMs = await references.mediaDuration(given.audioMediaId, 'audio', 'audioMediaId');
      const max = model.capabilities.maxAudioSeconds;
      if ((audioMs ?? 0) > max * 1000) {
        throw new AppError(
          ErrorCode.UnsupportedCombination,
          `audioMediaId: the audio lasts ${Math.ceil((audioMs ?? 0) / 1000)} s; this model takes at most ${max} s`,
          { field: 'audioMediaId', allowed: { maxAudioSeconds: max } },
        );
      }
    }
    const avatar = await references.avatar(given.avatarId, 'avatarId');
    const voiceModelId =
      given.script !== null && avatar !== undefined
        ? (given.voiceModelId ?? avatar.voiceModelId ?? defaultVoice)
        : given.voiceModelId;
    if (voiceModelId !== null) await references.voice(voiceModelId, 'voiceModelId', model.modelId);
    const settings = { ...given, voiceModelId };
    return { settings, units: avatarSeconds(model, settings, audioMs) };
  },
  async load(settings, loader) {
    const portrait = await loader.avatarPortrait(settings.avatarId, 'avatarId');
    const voice =
      settings.script !== null && settings.voiceModelId !== null
        ? await loader.engineVoice(settings.voiceModelId, 'voiceModelId')
        : null;
    const audio =
      settings.audioMediaId === null
        ? null
        : await loader.mediaBytes(settings.audioMediaId, 'audioMediaId');
    return { portrait, voice, audio };
  },
};
