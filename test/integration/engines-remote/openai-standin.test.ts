import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ConfigError } from '../../../src/config/config.ts';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { testPicture } from '../../helpers/media.ts';
import { freePort } from '../../helpers/net.ts';
import {
  accountWords,
  content,
  failureAudiences,
  generateSpeech,
  remoteImageModel,
  remoteSpeechModel,
} from '../../helpers/remote-engines.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { OpenAiStandin } from '../../helpers/standins/openai.ts';

// What a real Atelier cannot be made to do — refuse a prompt, throttle, fail, return a file
// that is not an image — played by a protocol stand-in of OpenAI's media API.

const key = 'sk-standin-0123456789abcdefABCDEF';

describeEachBackend('openai-* engines against a protocol stand-in of OpenAI', (backend) => {
  const standin = new OpenAiStandin(key);
  let database: Database;
  let t: TestApp;
  let nowhere: string;

  before(async () => {
    await standin.server.listen();
    database = await createTestDatabase(backend);
    const v1 = standin.baseUrl;
    nowhere = `http://127.0.0.1:${await freePort()}/v1`; // nothing listens there
    // dall-e answers PNG only: its models offer no other format.
    const dallE = (modelId: string, options: Record<string, unknown>) => {
      const model = remoteImageModel(modelId, v1, 'dall-e-2', options);
      return { ...model, capabilities: { ...model.capabilities, formats: ['png'] } };
    };
    const badKey = {
      ...remoteImageModel('mdl_oa-bad-key', v1, 'gpt-image-1'),
      engineOptions: { baseUrl: v1, model: 'gpt-image-1', apiKeyEnv: 'OTHER_KEY' },
    };
    t = await startTestApp(database, {
      env: {
        REMOTE_KEY: key,
        OTHER_KEY: 'sk-wrong-9876543210zyxwvu',
        MODELS: JSON.stringify([
          remoteImageModel('mdl_oa-image', v1, 'gpt-image-1', { maxAttempts: 3 }),
          dallE('mdl_oa-url', { responseFormat: 'url', maxOutputBytes: 200 }),
          dallE('mdl_oa-dall-e', {}),
          badKey,
          // Two images of up to 100 MiB: 267 MiB of base64, over the fixed cap of the answer.
          remoteImageModel('mdl_oa-nowhere', nowhere, 'gpt-image-1', { maxAttempts: 1 }),
          remoteImageModel('mdl_oa-large', v1, 'gpt-image-1', { maxOutputBytes: 100 * 2 ** 20 }),
          {
            ...remoteSpeechModel('mdl_oa-voice', v1, 'tts-1', 'alloy'),
            capabilities: { formats: ['wav'], pitch: { min: 1, max: 1 }, maxTextLength: 4096 },
          },
          {
            // An OpenAI custom voice, addressed by its id.
            ...remoteSpeechModel('mdl_oa-custom', v1, 'gpt-4o-mini-tts', { id: 'voice_abc123' }),
            engineOptions: {
              ...remoteSpeechModel('x', v1, 'gpt-4o-mini-tts', 'x').engineOptions,
              voices: [
                {
                  voiceModelId: 'voc_custom',
                  voice: { id: 'voice_abc123' },
                  name: 'Our narrator',
                  language: 'en',
                },
              ],
            },
            capabilities: { formats: ['wav'], pitch: { min: 1, max: 1 }, maxTextLength: 4096 },
          },
        ]),
      },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    await standin.server.close();
  });

  const image = async (modelId: string, prompt: string) => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const submitted = await submitOk(t.url, apiKey, { modelId, prompt, width: 512, height: 512 });
    const task = await waitForTask(t.url, apiKey, submitted.taskId);
    return { apiKey, submitted, task, content: await content(t.url, apiKey, submitted.contentId) };
  };

  it('speaks each model family’s API as OpenAI documents it, with no extra option', async () => {
    // GPT image models: output_format, never response_format (OpenAI answers 400
    // unknown_parameter to it); the gpt-image-1 model of docs/engine-openai.md works as written.
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const jpeg = await submitOk(t.url, apiKey, {
      modelId: 'mdl_oa-image',
      prompt: 'a jpeg',
      width: 512,
      height: 512,
      format: 'jpeg',
    });
    const gpt = await waitForTask(t.url, apiKey, jpeg.taskId);
    assert.equal(gpt.finishCode, FinishCode.Ok, gpt.finishMessage ?? '');
    const done = await content(t.url, apiKey, jpeg.contentId);
    assert.equal(done.media[0]!.mimeType, 'image/jpeg');
    const [sent] = standin
      .calls('/images/generations')
      .filter((r) => (r.json as { prompt: string }).prompt === 'a jpeg');
    assert.equal((sent!.json as Record<string, unknown>).output_format, 'jpeg');
    assert.equal('response_format' in (sent!.json as object), false);
    // dall-e: response_format (b64_json unless the model says url), never output_format.
    const dall = await image('mdl_oa-dall-e', 'a dall-e picture');
    assert.equal(dall.task.finishCode, FinishCode.Ok, dall.task.finishMessage ?? '');
    const [toDallE] = standin
      .calls('/images/generations')
      .filter((r) => (r.json as { prompt: string }).prompt === 'a dall-e picture');
    assert.deepEqual(toDallE!.json, {
      model: 'dall-e-2',
      prompt: 'a dall-e picture',
      n: 1,
      size: '512x512',
      response_format: 'b64_json',
    });
  });

  it('sends the key as a bearer token and waits out a 429 with Retry-After', async () => {
    standin.server.failNext(
      (r) => r.json !== undefined && (r.json as { prompt?: string }).prompt === 'throttled',
      1,
      {
        status: 429,
        headers: { 'retry-after': '0', 'content-type': 'application/json' },
        body: '{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}',
      },
    );
    const { task, submitted, content: done } = await image('mdl_oa-image', 'throttled');
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    assert.equal(done.media.length, 1);
    const calls = standin
      .calls('/images/generations')
      .filter((r) => (r.json as { prompt: string }).prompt === 'throttled');
    assert.equal(calls.length, 2);
    for (const call of calls) {
      assert.equal(call.headers.authorization, `Bearer ${key}`);
      assert.equal(call.headers['idempotency-key'], `atelier-${submitted.taskId}`);
      assert.deepEqual(call.json, {
        model: 'gpt-image-1',
        prompt: 'throttled',
        n: 1,
        size: '512x512',
        output_format: 'png',
      });
    }
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    const backend = `openai-images ${new URL(standin.baseUrl).origin}`;
    assert.match(
      metrics,
      new RegExp(
        `atelier_backend_call_duration_seconds_count\\{backend="${backend}",outcome="failed",status="429"\\} [1-9]`,
      ),
    );
    // /readyz lists every configured backend, called or not, and stays ready.
    const ready = await fetch(`${t.url}/readyz`);
    assert.equal(ready.status, 200);
    const { backends } = (await ready.json()) as { backends: Array<Record<string, unknown>> };
    const origin = new URL(standin.baseUrl).origin;
    const images = backends.find((b) => b.backend === `openai-images ${origin}`);
    assert.equal(images?.reachable, true);
    assert.ok(Number(images?.calls) >= 2 && Number(images?.failures) >= 1, JSON.stringify(images));
    // The speech backend ran nothing; at most its probe (GET /models) has called it.
    const speech = backends.find((b) => b.backend === `openai-speech ${origin}`);
    assert.ok(speech !== undefined, 'listed before any run');
    assert.equal(speech.failures, 0);
    assert.ok(
      speech.calls === 0 ? speech.reachable === null : speech.lastStatus === 200,
      JSON.stringify(speech),
    );
    assert.equal(standin.calls('/audio/speech').length, 0);
  });

  it('a content-policy refusal finishes with code 4, refunded; the provider message is logged', async () => {
    const { task, apiKey } = await image('mdl_oa-image', 'something forbidden');
    assert.equal(task.finishCode, FinishCode.RejectedInput);
    assert.match(
      await failureAudiences(t, task, accountWords.refused),
      /HTTP 400 \(moderation_blocked\): Your request was rejected by the safety system/,
    );
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 });
  });

  it('a 500 in every attempt finishes with code 1, refunded, after 3 attempts', async () => {
    standin.server.failNext(
      (r) => (r.json as { prompt?: string } | undefined)?.prompt === 'down',
      3,
      {
        status: 500,
        headers: { 'retry-after-ms': '1', 'content-type': 'application/json' },
        body: '{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}',
      },
    );
    const { task, apiKey } = await image('mdl_oa-image', 'down');
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    // The model server's address, status and words are for the operator: in the log only.
    assert.equal(
      await failureAudiences(t, task, accountWords.failed),
      `openai-images (model gpt-image-1) at ${standin.baseUrl} answered HTTP 500: The server had an error`,
    );
    assert.equal(
      standin
        .calls('/images/generations')
        .filter((r) => (r.json as { prompt: string }).prompt === 'down').length,
      3,
    );
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 });
  });

  it('an output that is not an image, or not of the asked size, finishes with code 1', async () => {
    try {
      standin.images = async () => Buffer.from('<html>not an image</html>');
      const garbage = await image('mdl_oa-image', 'garbage');
      assert.equal(garbage.task.finishCode, FinishCode.EngineFailure);
      assert.match(
        await failureAudiences(t, garbage.task, accountWords.unusable),
        /^openai-images \(model gpt-image-1\) at \S+ returned an unusable image: not a readable image/,
      );
      assert.deepEqual(await balances(t.url, garbage.apiKey), { standard: 100 });
      // A good header over half an image: decoded whole, it is refused, not stored.
      standin.images = (w, h) =>
        testPicture(w, h).then((png) => png.subarray(0, Math.floor(png.length / 2)));
      const truncated = await image('mdl_oa-image', 'truncated');
      assert.equal(truncated.task.finishCode, FinishCode.EngineFailure);
      assert.match(
        await failureAudiences(t, truncated.task, accountWords.unusable),
        /returned an unusable image: not a readable image \(.+\)$/,
      );
      assert.deepEqual(await balances(t.url, truncated.apiKey), { standard: 100 });
      standin.images = (w, h) =>
        import('sharp').then(({ default: sharp }) =>
          sharp({ create: { width: w / 2, height: h / 2, channels: 3, background: '#000' } })
            .png()
            .toBuffer(),
        );
      const small = await image('mdl_oa-image', 'small');
      assert.match(
        await failureAudiences(t, small.task, accountWords.unusable),
        /image 1 is 256x256, 512x512 was asked for/,
      );
    } finally {
      standin.images = null;
    }
  });

  it('an output URL larger than the cap finishes with code 1', async () => {
    const { task, content: done } = await image('mdl_oa-url', 'a big one');
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.unusable),
      /output could not be fetched \(larger than 200 bytes\)/,
    );
    assert.equal(done.media.length, 0);
  });

  it('a model server that does not answer: code 1, its address only logged', async () => {
    const { task, apiKey } = await image('mdl_oa-nowhere', 'anyone there');
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.unreachable),
      new RegExp(
        `^No answer from openai-images \\(model gpt-image-1\\) at ${nowhere} after 1 attempt\\(s\\): ${new URL(nowhere).origin}: .*ECONNREFUSED`,
      ),
    );
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 });
  });

  it('an images answer over 200 MiB is refused whatever n × maxOutputBytes allows', async () => {
    // The stand-in declares a body of 210 MiB and never sends it: a capped reader refuses it
    // on the declared length; one that would read it meets a body cut short.
    standin.server.failNext((r) => (r.json as { prompt?: string }).prompt === 'a huge pair', 1, {
      status: 200,
      headers: { 'content-type': 'application/json', 'content-length': String(210 * 2 ** 20) },
      body: '{"created":1762070400,"data":[',
    });
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const submitted = await submitOk(t.url, apiKey, {
      modelId: 'mdl_oa-large',
      prompt: 'a huge pair',
      width: 512,
      height: 512,
      count: 2,
    });
    const task = await waitForTask(t.url, apiKey, submitted.taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.unusable),
      /returned an unusable image: the answer is larger than 209715200 bytes/,
    );
    const calls = standin
      .calls('/images/generations')
      .filter((r) => (r.json as { prompt: string }).prompt === 'a huge pair');
    assert.equal(calls.length, 1, 'refused, not retried');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 });
  });

  it('/readyz: a server that answered an error is reachable; only silence is not', async () => {
    // Issue 30 §6: a working backend showed as unreachable after a call got a 404.
    const refused = await image('mdl_oa-bad-key', 'is anyone answering');
    assert.equal(refused.task.finishCode, FinishCode.EngineFailure);
    const silent = await image('mdl_oa-nowhere', 'is anyone there');
    assert.equal(silent.task.finishCode, FinishCode.EngineFailure);
    const { backends } = (await (await fetch(`${t.url}/readyz`)).json()) as {
      backends: Array<Record<string, unknown>>;
    };
    const answered = backends.find(
      (b) => b.backend === `openai-images ${new URL(standin.baseUrl).origin}`,
    );
    // The server's answer, however it went; the models' health probes of this origin (with a
    // good key, every 30 s) may have answered 200 since, which the state says just as well.
    const lastAnswer = [answered?.lastOk, answered?.lastStatus];
    assert.equal(answered?.reachable, true);
    assert.ok(
      JSON.stringify(lastAnswer) === '[false,401]' || JSON.stringify(lastAnswer) === '[true,200]',
      JSON.stringify(lastAnswer),
    );
    const nobody = backends.find((b) => b.backend === `openai-images ${new URL(nowhere).origin}`);
    assert.deepEqual([nobody?.reachable, nobody?.lastOk, nobody?.lastStatus], [false, false, null]);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(
      metrics,
      /atelier_backend_call_duration_seconds_count\{backend="openai-images [^"]+",outcome="failed",status="401"\} [1-9]/,
    );
    assert.match(
      metrics,
      /atelier_backend_call_duration_seconds_count\{backend="openai-images [^"]+",outcome="failed",status="none"\} [1-9]/,
    );
  });

  it('a refused key finishes with code 1 and its value appears nowhere', async () => {
    const { task, content: done } = await image('mdl_oa-bad-key', 'who am i');
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.failed),
      /HTTP 401 \(invalid_api_key\): Incorrect API key provided: \[redacted\]/,
    );
    for (const secret of ['sk-wrong-9876543210zyxwvu', key]) {
      assert.ok(!JSON.stringify(done).includes(secret), 'not in GraphQL output');
      assert.ok(!t.logs().includes(secret), 'not in the logs');
    }
  });

  it('speech: the configured voice is sent as `voice`, the WAV checked', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const res = await generateSpeech(t.url, apiKey, {
      modelId: 'mdl_oa-voice',
      voiceModelId: 'voc_remote-en',
      text: 'Hello.',
    });
    const task = await waitForTask(t.url, apiKey, res.body.data!.generateSpeech!.taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const [call] = standin.calls('/audio/speech');
    assert.deepEqual(call?.json, {
      model: 'tts-1',
      input: 'Hello.',
      voice: 'alloy',
      response_format: 'wav',
      speed: 1,
    });
    const { media } = await content(t.url, apiKey, res.body.data!.generateSpeech!.contentId);
    assert.equal(media[0]?.mimeType, 'audio/wav');
  });

  it('speech: a custom voice is sent as {"id": "voice_…"}, as OpenAI addresses it', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const res = await generateSpeech(t.url, apiKey, {
      modelId: 'mdl_oa-custom',
      voiceModelId: 'voc_custom',
      text: 'Custom.',
    });
    const task = await waitForTask(t.url, apiKey, res.body.data!.generateSpeech!.taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const call = standin
      .calls('/audio/speech')
      .find((r) => (r.json as { input: string }).input === 'Custom.');
    assert.ok(call, 'the custom voice reached the server');
    assert.deepEqual((call.json as { voice: unknown }).voice, { id: 'voice_abc123' });
  });

  it('a model whose apiKeyEnv variable is not set: the start is refused, naming it', async () => {
    const other = await createTestDatabase(backend);
    try {
      const models = JSON.stringify([
        remoteImageModel('mdl_oa-unset', standin.baseUrl, 'gpt-image-1'),
      ]);
      await assert.rejects(startTestApp(other, { env: { MODELS: models } }), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(
          error.message,
          /MODELS\[0\] \(mdl_oa-unset\): engineOptions.apiKeyEnv names REMOTE_KEY, which is not set/,
        );
        return true;
      });
    } finally {
      await other.close();
    }
  });
});
