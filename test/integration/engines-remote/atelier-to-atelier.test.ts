import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { download } from '../../helpers/media.ts';
import {
  cancelTask,
  content,
  generateSpeech,
  remoteImageModel,
  remoteSpeechModel,
} from '../../helpers/remote-engines.ts';
import { seedAccount } from '../../helpers/seed.ts';

// End to end against a real server: a second Atelier serves its OpenAI-compatible /v1, and the
// first runs its openai-images / openai-speech models on it with an API key of an account
// there. Each side charges its own pricing.

describeEachBackend('openai-* engines driving another Atelier', (backend) => {
  const databases: Database[] = [];
  let provider: TestApp; // the second Atelier: the model server
  let atelier: TestApp; // the first: the one users call
  let providerKey = '';

  before(async () => {
    databases.push(await createTestDatabase(backend), await createTestDatabase(backend));
    provider = await startTestApp(databases[0]!, { env: { MODELS: testModels } });
    providerKey = (await seedAccount(provider.app, { credits: { standard: 100 } })).apiKey;
    const v1 = `${provider.url}/v1`;
    atelier = await startTestApp(databases[1]!, {
      env: {
        REMOTE_KEY: providerKey,
        MODELS: JSON.stringify([
          remoteImageModel('mdl_remote-sketch', v1, 'mdl_atelier-sketch'),
          remoteImageModel('mdl_remote-url', v1, 'mdl_atelier-sketch', { responseFormat: 'url' }),
          remoteImageModel('mdl_remote-slow', v1, 'mdl_test-slow', { outputFormat: false }, 64),
          remoteSpeechModel('mdl_remote-voice', v1, 'mdl_atelier-voice', 'voc_en-gb'),
        ]),
      },
    });
  });
  after(async () => {
    await atelier?.close();
    await provider?.close();
    for (const database of databases) await database.close();
  });

  const providerBalance = async () => (await balances(provider.url, providerKey)).standard ?? 0;

  it('makes images there (b64_json and url), checked, each side charging its own price', async () => {
    const { apiKey } = await seedAccount(atelier.app, { credits: { standard: 100 } });
    const providerBefore = await providerBalance();
    for (const [modelId, format] of [
      ['mdl_remote-sketch', 'png'],
      ['mdl_remote-url', 'jpeg'],
    ]) {
      const submitted = await submitOk(atelier.url, apiKey, {
        modelId,
        prompt: 'a lighthouse on a cliff at dawn',
        width: 512,
        height: 512,
        count: 2,
        format,
      });
      const task = await waitForTask(atelier.url, apiKey, submitted.taskId);
      assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
      const { media, creditsCharged } = await content(atelier.url, apiKey, submitted.contentId);
      assert.equal(creditsCharged, 10);
      assert.equal(media.length, 2);
      for (const m of media) {
        const bytes = await download(atelier.url, apiKey, m.mediaId);
        const meta = await sharp(bytes).metadata();
        assert.deepEqual([meta.format, meta.width, meta.height], [format, 512, 512]);
        assert.equal(m.mimeType, `image/${format}`);
      }
    }
    assert.deepEqual(await balances(atelier.url, apiKey), { standard: 80 });
    // The model server charged its own price: mdl_atelier-sketch, 1 credit an image.
    assert.equal(providerBefore - (await providerBalance()), 4);
    assert.ok(!atelier.logs().includes(providerKey), 'the key is never logged');
  });

  it('speaks with a configured voice there, listed with the built-in voices', async () => {
    const { apiKey } = await seedAccount(atelier.app, { credits: { standard: 100 } });
    const voices = await graphql<{ listVoiceModels: { nodes: Array<Record<string, unknown>> } }>(
      atelier.url,
      {
        query:
          '{ listVoiceModels(language: "en", first: 100) { nodes { voiceModelId name previewMediaId } } }',
      },
    );
    const ids = voices.body.data!.listVoiceModels.nodes.map((v) => v.voiceModelId);
    assert.ok(ids.includes('voc_remote-en') && ids.includes('voc_en-gb'), ids.join());
    const remote = voices.body.data!.listVoiceModels.nodes.find(
      (v) => v.voiceModelId === 'voc_remote-en',
    );
    assert.deepEqual(remote, {
      voiceModelId: 'voc_remote-en',
      name: 'Remote English',
      previewMediaId: null,
    });

    const providerBefore = await providerBalance();
    const text = 'Hello from the first Atelier, spoken by the second.'; // 51 characters
    const res = await generateSpeech(atelier.url, apiKey, {
      modelId: 'mdl_remote-voice',
      voiceModelId: 'voc_remote-en',
      text,
      format: 'ogg',
    });
    assert.deepEqual(errorCodes(res), []);
    const { contentId, taskId } = res.body.data!.generateSpeech!;
    const task = await waitForTask(atelier.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const { media, creditsCharged } = await content(atelier.url, apiKey, contentId);
    assert.equal(creditsCharged, 6); // 1 credit per 10 characters, rounded up
    const bytes = await download(atelier.url, apiKey, media[0]!.mediaId);
    assert.equal(bytes.subarray(0, 4).toString('latin1'), 'OggS');
    assert.equal(media[0]!.mimeType, 'audio/ogg');
    assert.equal(providerBefore - (await providerBalance()), 1); // mdl_atelier-voice: 1 per 100 chars

    // A configured voice speaks only on its model, and that model only with its voices.
    const wrongVoice = await generateSpeech(atelier.url, apiKey, {
      modelId: 'mdl_remote-voice',
      voiceModelId: 'voc_en-gb',
      text,
    });
    assert.deepEqual(errorCodes(wrongVoice), ['120001']);
    assert.match(
      JSON.stringify(wrongVoice.body.errors),
      /speaks only with its own voices: voc_remote-en/,
    );
    const wrongModel = await generateSpeech(atelier.url, apiKey, {
      modelId: 'mdl_atelier-voice',
      voiceModelId: 'voc_remote-en',
      text,
    });
    assert.deepEqual(errorCodes(wrongModel), ['120001']);
  });

  it('a cancel closes the call: the first refunds, the second finishes what it was asked', async () => {
    const { apiKey } = await seedAccount(atelier.app, { credits: { standard: 100 } });
    const providerBefore = await providerBalance();
    const submitted = await submitOk(atelier.url, apiKey, {
      modelId: 'mdl_remote-slow',
      prompt: 'slow',
      width: 64,
      height: 64,
    });
    const started = await provider.logged(
      (e) => e.msg === 'task started' && e.modelId === 'mdl_test-slow',
    );
    const cancelled = await cancelTask(atelier.url, apiKey, submitted.taskId);
    assert.equal(cancelled.body.data?.cancelTask.finishCode, FinishCode.Cancelled);
    assert.deepEqual(await balances(atelier.url, apiKey), { standard: 100 });
    // The second sees its client go; its generation goes on (the /v1 API has no cancel) and
    // stays in the account's history there, charged at its price.
    await provider.logged(
      (e) => e.msg === 'client gone before its generation finished; the generation goes on',
    );
    const there = await waitForTask(provider.url, providerKey, String(started.taskId));
    assert.equal(there.finishCode, FinishCode.Ok);
    assert.equal(providerBefore - (await providerBalance()), 3);
    assert.deepEqual(await balances(atelier.url, apiKey), { standard: 100 });
  });
});
