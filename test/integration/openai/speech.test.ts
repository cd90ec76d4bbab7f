import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { balances, countContents } from '../../helpers/generation.ts';
import { apiError, errorFields, openaiClient } from '../../helpers/openai.ts';
import { seedAccount } from '../../helpers/seed.ts';

const input = 'Hello from Atelier.';

/** What each format's file starts with, and the Content-Type it is served as. */
const formats = {
  mp3: {
    type: 'audio/mpeg',
    // An ID3 tag, or straight into an MPEG audio frame (11 sync bits).
    looksRight: (b: Buffer) =>
      b.subarray(0, 3).toString('latin1') === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0),
  },
  wav: {
    type: 'audio/wav',
    looksRight: (b: Buffer) =>
      b.subarray(0, 4).toString('latin1') === 'RIFF' &&
      b.subarray(8, 12).toString('latin1') === 'WAVE',
  },
  // OpenAI's `opus` is Opus in an Ogg file: the first page carries the OpusHead packet.
  opus: {
    type: 'audio/ogg',
    looksRight: (b: Buffer) =>
      b.subarray(0, 4).toString('latin1') === 'OggS' &&
      b.subarray(0, 200).includes(Buffer.from('OpusHead')),
  },
} as const;

describeEachBackend('/v1/audio/speech with the official SDK', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(backend, {}, (started) => {
    ({ database, t } = started);
  });

  for (const [format, expected] of Object.entries(formats)) {
    it(`response_format ${format}: the audio file itself, served as ${expected.type}`, async () => {
      const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
      const client = openaiClient(t.url, apiKey);
      const response = await client.audio.speech.create({
        model: 'mdl_atelier-voice',
        voice: 'voc_en-gb',
        input,
        response_format: format as keyof typeof formats,
      });
      assert.equal(response.headers.get('content-type'), expected.type);
      assert.match(response.headers.get('atelier-content-id') ?? '', /^cnt_/);
      const bytes = Buffer.from(await response.arrayBuffer());
      assert.ok(bytes.length > 1000, `${bytes.length} bytes`);
      assert.ok(expected.looksRight(bytes), bytes.subarray(0, 16).toString('hex'));
      assert.deepEqual(await balances(t.url, apiKey), { standard: 9 });
    });
  }

  it("without response_format: the model's first format; a voice given as { id }", async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const client = openaiClient(t.url, apiKey);
    const response = await client.audio.speech.create({
      model: 'mdl_atelier-voice',
      voice: { id: 'voc_en-us' },
      input,
    });
    assert.equal(response.headers.get('content-type'), 'audio/mpeg');
    assert.ok(formats.mp3.looksRight(Buffer.from(await response.arrayBuffer())));
  });

  it('aac, flac and pcm: 400 120002 on response_format, with the formats offered', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 10 } });
    const client = openaiClient(t.url, apiKey, { maxRetries: 2 });
    for (const format of ['aac', 'flac', 'pcm'] as const) {
      const error = await apiError(
        client.audio.speech.create({
          model: 'mdl_atelier-voice',
          voice: 'voc_en-gb',
          input,
          response_format: format,
        }),
      );
      assert.deepEqual([error.status, error.code, error.param], [400, '120002', 'response_format']);
      assert.deepEqual(errorFields(error).allowed, ['mp3', 'wav', 'opus']);
    }
    assert.equal(await countContents(database, account.id), 0);
  });

  it('an unknown voice, a speed out of range, instructions: named, nothing charged', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 10 } });
    const client = openaiClient(t.url, apiKey);
    const ask = (params: Record<string, unknown>) =>
      apiError(
        client.audio.speech.create({
          model: 'mdl_atelier-voice',
          voice: 'voc_en-gb',
          input,
          ...params,
        }),
      );
    const voice = await ask({ voice: 'alloy' });
    assert.deepEqual([voice.status, voice.code, voice.param], [404, '140004', 'voice']);
    const speed = await ask({ speed: 4 });
    assert.deepEqual([speed.status, speed.code, speed.param], [400, '120002', 'speed']);
    assert.deepEqual(errorFields(speed).allowed, { min: 0.5, max: 2 });
    const style = await ask({ instructions: 'whisper' });
    assert.deepEqual([style.status, style.code, style.param], [400, '120002', 'instructions']);
    const empty = await ask({ input: '   ' });
    assert.deepEqual([empty.status, empty.code, empty.param], [400, '120001', 'input']);
    const image = await ask({ model: 'mdl_atelier-sketch' });
    assert.deepEqual([image.status, image.code, image.param], [400, '120001', 'model']);
    assert.equal(await countContents(database, account.id), 0);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });
});
