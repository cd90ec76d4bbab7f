import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ffmpeg } from '../../src/engines/media/ffmpeg.ts';
import { type AudioFormat, decodeAudio, encodeAudio } from '../../src/engines/speech/audio.ts';
import { chunkText } from '../../src/engines/speech/chunk-text.ts';
import {
  closeEspeak,
  listEspeakVoices,
  type SpeechAudio,
  type SynthesisRequest,
  synthesize,
} from '../../src/engines/speech/espeak.ts';
import {
  mouthFromLoudness,
  mouthFromPhonemes,
  phonemeOpenness,
} from '../../src/engines/speech/mouth.ts';
import { settledThisTurn } from '../helpers/settled.ts';

const noAbort = new AbortController().signal;
const hello = 'Hello world, how are you';
const paragraph = [
  'The lighthouse keeper climbed the spiral stairs every evening at dusk.',
  'From the top she could see the fishing boats returning to the harbour, their lanterns swaying.',
  'Some nights the fog rolled in so thick that the beam seemed to stop a few metres from the glass.',
  'On those nights she wound the foghorn and listened to its low voice travel across the water.',
  'In the morning the gulls would gather on the railings, waiting for the crusts from her breakfast.',
  'She kept a logbook of every ship that passed, with the weather, the tide and the time.',
  'Over thirty years the logbook had grown to fill an entire shelf in the little kitchen below.',
  'Visitors sometimes asked whether she was lonely, and she always said that the sea was company enough.',
  'When the lamp was finally automated, she stayed on to look after the garden and the old brass clock.',
  'Children from the village still come on Sundays to hear her stories about storms and shipwrecks.',
].join(' ');

function say(text: string, overrides: Partial<SynthesisRequest> = {}): Promise<SpeechAudio> {
  return synthesize({ text, voice: 'en-us', speed: 1, pitch: 1, ...overrides }, noAbort);
}

function durationMs(audio: { samples: Int16Array; sampleRate: number }): number {
  return (audio.samples.length / audio.sampleRate) * 1000;
}

after(() => closeEspeak());

describe('eSpeak NG voices', () => {
  it('lists over a hundred voices, named, with English and German among them', async () => {
    const voices = await listEspeakVoices();
    assert.ok(voices.length > 100, `only ${voices.length} voices`);
    const ids = voices.map((voice) => voice.id);
    for (const id of ['en-us', 'en-gb', 'de']) assert.ok(ids.includes(id), `no ${id}`);
    assert.deepEqual(ids, [...new Set(ids)].sort(), 'ids are unique and sorted');
    for (const voice of voices) {
      assert.ok(voice.name.length > 0, `${voice.id} has no name`);
      assert.match(voice.language, /^[a-z]{2,8}(-[a-z0-9]+)*$/, voice.id);
      assert.ok(voice.gender === 'male' || voice.gender === 'female' || voice.gender === null);
    }
    assert.equal(voices.find((voice) => voice.id === 'de')?.name, 'German');
  });

  it('gives the same list on a second call', async () => {
    assert.equal(await listEspeakVoices(), await listEspeakVoices());
    assert.deepEqual(await listEspeakVoices(), await listEspeakVoices());
  });
});

describe('synthesize', () => {
  let short: SpeechAudio;
  before(async () => {
    short = await say(hello);
  });

  it('speaks a short sentence with phonemes inside the audio, in time order', () => {
    assert.equal(short.sampleRate, 22050);
    assert.ok(durationMs(short) > 300, `${durationMs(short)} ms`);
    assert.ok(short.phonemes.length >= 10, `${short.phonemes.length} phonemes`);
    let previousEnd = 0;
    for (const { phoneme, startMs, endMs } of short.phonemes) {
      assert.ok(phoneme.length > 0);
      assert.ok(startMs >= previousEnd && endMs > startMs, `${phoneme} ${startMs}..${endMs}`);
      assert.ok(endMs <= durationMs(short), `${phoneme} ends after the audio`);
      previousEnd = endMs;
    }
    assert.ok(
      short.samples.some((sample) => Math.abs(sample) > 1000),
      'audible',
    );
  });

  it('takes clearly longer for a text three times as long', async () => {
    const long = await say(`${hello}. ${hello}. ${hello}.`);
    assert.ok(durationMs(long) > 2.2 * durationMs(short), `${durationMs(long)} ms`);
  });

  it('speaks faster at speed 2 and changes the sound with pitch', async () => {
    const fast = await say(hello, { speed: 2 });
    assert.ok(durationMs(fast) < 0.7 * durationMs(short), `${durationMs(fast)} ms`);
    const high = await say(hello, { pitch: 1.6 });
    assert.notDeepEqual(high.samples, short.samples);
    assert.ok(Math.abs(durationMs(high) - durationMs(short)) < 0.15 * durationMs(short));
  });

  it('speaks a 6,000-character text in pieces, all of it', async () => {
    const one = await say(paragraph);
    const text = Array.from({ length: 6 }, () => paragraph).join('\n\n');
    assert.ok(text.length > 5500 && chunkText(text).length >= 6);
    const six = await say(text);
    const ratio = durationMs(six) / durationMs(one);
    assert.ok(ratio > 5.4 && ratio < 6.6, `6 paragraphs last ${ratio} times one`);
    const starts = six.phonemes.map((p) => p.startMs);
    assert.deepEqual(
      starts,
      [...starts].sort((a, b) => a - b),
    );
    assert.ok(durationMs(six) - six.phonemes.at(-1)!.endMs < 1500, 'phonemes reach the end');
    const ratioOfPhonemes = six.phonemes.length / one.phonemes.length;
    assert.ok(ratioOfPhonemes > 5.8 && ratioOfPhonemes < 6.2, `${ratioOfPhonemes}`);
  });

  it('rejects an unknown voice or variant, naming it', async () => {
    await assert.rejects(say('Hello', { voice: 'xx-nowhere' }), /xx-nowhere/);
    await assert.rejects(say('Hello', { voice: 'en-gb+nope' }), /en-gb\+nope/);
  });

  it('a variant (en-gb+f2) speaks the same language in another timbre', async () => {
    const plain = await say('Hello there, how are you?', { voice: 'en-gb' });
    const female = await say('Hello there, how are you?', { voice: 'en-gb+f2' });
    assert.notDeepEqual(female.samples, plain.samples);
    assert.ok(female.phonemes.length > 5);
  });

  it('on abort rejects at once with the reason, and works again afterwards', async () => {
    const controller = new AbortController();
    const text = Array.from({ length: 6 }, () => paragraph).join(' ');
    const running = synthesize({ text, voice: 'en-us', speed: 1, pitch: 1 }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error('user cancelled');
    controller.abort(reason);
    // At once: before the event loop's next turn, so before anything from the worker (its
    // answer, its exit) could have arrived.
    assert.equal(await settledThisTurn(running), reason);
    const again = await say('Still here.', { voice: 'de' });
    assert.ok(durationMs(again) > 300);
  });

  it('aborting a queued synthesis leaves the running one alone', async () => {
    const first = say(paragraph);
    const controller = new AbortController();
    const queued = synthesize(
      { text: hello, voice: 'en-us', speed: 1, pitch: 1 },
      controller.signal,
    );
    controller.abort(new Error('never mind'));
    await assert.rejects(queued, /never mind/);
    assert.ok(durationMs(await first) > 10_000);
  });
});

describe('chunkText', () => {
  it('keeps every word, in order, in pieces of at most 1000 characters', () => {
    const text = `${Array.from({ length: 20 }, () => paragraph).join('\n\n')} ${'x'.repeat(2500)}`;
    const chunks = chunkText(text);
    for (const chunk of chunks) assert.ok(chunk.length <= 1000 && chunk.length > 0);
    assert.equal(chunks.join('').replace(/\s+/g, ''), text.replace(/\s+/g, ''));
    assert.ok(
      chunks.slice(0, -4).every((chunk) => chunk.endsWith('.')),
      'sentence boundaries',
    );
  });
});

describe('encodeAudio and decodeAudio', () => {
  const ffmpeg = Ffmpeg.resolve();
  let clip: SpeechAudio;
  before(async () => {
    clip = await say(hello);
  });

  const expected: Record<AudioFormat, { codec: string; mimeType: string; slackMs: number }> = {
    wav: { codec: 'pcm_s16le', mimeType: 'audio/wav', slackMs: 100 },
    mp3: { codec: 'mp3', mimeType: 'audio/mpeg', slackMs: 150 },
    ogg: { codec: 'opus', mimeType: 'audio/ogg', slackMs: 150 },
  };
  for (const [format, { codec, mimeType, slackMs }] of Object.entries(expected)) {
    it(`encodes ${format} that ffprobe reads as ${codec} of the right length`, async () => {
      const encoded = await encodeAudio(
        ffmpeg,
        clip.samples,
        clip.sampleRate,
        format as AudioFormat,
        noAbort,
      );
      assert.equal(encoded.mimeType, mimeType);
      assert.equal(encoded.extension, format);
      assert.ok(Math.abs(encoded.durationMs - durationMs(clip)) < 1);
      const probe = await ffmpeg.probe(encoded.bytes);
      const [stream, ...others] = probe.streams;
      assert.equal(others.length, 0);
      assert.equal(stream?.type, 'audio');
      assert.equal(stream.codec, codec);
      assert.equal(stream.channels, 1);
      // ffprobe reading a pipe reports no duration for these formats; decoding measures it.
      const decoded = await decodeAudio(ffmpeg, encoded.bytes, clip.sampleRate, noAbort);
      const drift = Math.abs(durationMs(decoded) - durationMs(clip));
      assert.ok(drift < slackMs, `${format} is off by ${drift} ms`);
    });
  }

  it('writes WAV that decodes to exactly the same samples', async () => {
    const wav = await encodeAudio(ffmpeg, clip.samples, clip.sampleRate, 'wav', noAbort);
    assert.equal(wav.bytes.subarray(0, 4).toString('ascii'), 'RIFF');
    assert.equal(wav.bytes.length, 44 + clip.samples.length * 2);
    const decoded = await decodeAudio(ffmpeg, wav.bytes, clip.sampleRate, noAbort);
    assert.deepEqual(decoded.samples, clip.samples);
  });

  it('decodes MP3 back to PCM at the rate asked for, about as long as it was', async () => {
    const mp3 = await encodeAudio(ffmpeg, clip.samples, clip.sampleRate, 'mp3', noAbort);
    const decoded = await decodeAudio(ffmpeg, mp3.bytes, 16_000, noAbort);
    assert.equal(decoded.sampleRate, 16_000);
    assert.ok(Math.abs(durationMs(decoded) - durationMs(clip)) < 150);
    assert.ok(
      decoded.samples.some((sample) => Math.abs(sample) > 1000),
      'not silence',
    );
  });

  it('rejects with the abort reason', async () => {
    const reason = new Error('stop encoding');
    await assert.rejects(
      encodeAudio(ffmpeg, clip.samples, clip.sampleRate, 'ogg', AbortSignal.abort(reason)),
      (error) => error === reason,
    );
  });
});

describe('mouth', () => {
  const fps = 25;
  let clip: SpeechAudio;
  before(async () => {
    clip = await say(hello);
  });

  it('orders sounds by how far the mouth opens', () => {
    assert.equal(phonemeOpenness('ˈɑː'), 1);
    assert.ok(phonemeOpenness('ˈaʊ') > phonemeOpenness('ə'));
    assert.ok(phonemeOpenness('uː') > phonemeOpenness('t'));
    assert.ok(phonemeOpenness('t') > phonemeOpenness('f'));
    for (const closed of ['m', 'b', 'p', '']) assert.equal(phonemeOpenness(closed), 0);
  });

  it('opens wide on vowels and closes in pauses and after the speech', () => {
    const frameCount = Math.ceil(((durationMs(clip) + 500) / 1000) * fps);
    const mouth = mouthFromPhonemes(clip.phonemes, frameCount, fps);
    assert.equal(mouth.length, frameCount);
    assert.ok(mouth.every((value) => value >= 0 && value <= 1));
    assert.ok(
      mouth.some((value) => value > 0.5),
      'open somewhere',
    );
    assert.ok(
      mouth.some((value) => value < 0.1),
      'closed somewhere',
    );
    const afterSpeech = Math.ceil((durationMs(clip) / 1000) * fps) + 1;
    assert.ok(
      mouth.subarray(afterSpeech).every((value) => value === 0),
      'closed after',
    );
  });

  it('follows loudness: open in speech, closed in silence', () => {
    const padded = new Int16Array(clip.samples.length + clip.sampleRate / 2);
    padded.set(clip.samples);
    const frameCount = Math.ceil((padded.length / clip.sampleRate) * fps);
    const mouth = mouthFromLoudness(padded, clip.sampleRate, frameCount, fps);
    assert.equal(mouth.length, frameCount);
    assert.ok(mouth.every((value) => value >= 0 && value <= 1));
    assert.ok(
      mouth.some((value) => value > 0.3),
      'open somewhere in the speech',
    );
    const silentFrom = Math.ceil((clip.samples.length / clip.sampleRate) * fps);
    const silent = mouth.subarray(silentFrom);
    assert.ok(silent.length >= 10 && silent.every((value) => value < 0.05), `${silent}`);
  });
});
