import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, fakeModel, submitOk, waitForTask } from '../../helpers/generation.ts';
import { accountWords, failureAudiences, remoteImageModel } from '../../helpers/remote-engines.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Review 17, item 9: a second Atelier whose /v1 waits only a second answers a longer generation
// with 160001 (still running); the first keeps asking with the same Idempotency-Key until it
// finishes, charged once there. Its 160002 for a generation refused for its input (finish code
// 4) is a refusal here too.

describeEachBackend('openai-* engines chained to an Atelier that answers 160001', (backend) => {
  const databases: Database[] = [];
  let provider: TestApp;
  let atelier: TestApp;
  let providerKey = '';

  before(async () => {
    databases.push(await createTestDatabase(backend), await createTestDatabase(backend));
    // The fake engine draws one pixel: its models are offered at 1x1 on both sides here.
    const pixel = { sizes: [{ width: 1, height: 1, aspectRatio: '1:1', maxCount: 1 }] };
    const upstream = [
      fakeModel('mdl_test-slow', { durationMs: 3_500 }),
      fakeModel('mdl_test-fail', {
        failCode: FinishCode.RejectedInput,
        failMessage: 'Unreadable.',
      }),
    ].map((m) => ({ ...m, capabilities: { ...m.capabilities, ...pixel } }));
    provider = await startTestApp(databases[0]!, {
      env: { MODELS: JSON.stringify(upstream), OPENAI_WAIT_SECONDS: '1' },
    });
    providerKey = (await seedAccount(provider.app, { credits: { standard: 100 } })).apiKey;
    const v1 = `${provider.url}/v1`;
    // One attempt per call: the 160001 answers are not hidden by callProvider's own retries.
    const once = { outputFormat: false, maxAttempts: 1 };
    atelier = await startTestApp(databases[1]!, {
      env: {
        REMOTE_KEY: providerKey,
        MODELS: JSON.stringify([
          remoteImageModel('mdl_remote-slow', v1, 'mdl_test-slow', once, 1),
          remoteImageModel('mdl_remote-refusing', v1, 'mdl_test-fail', once, 1),
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
  const image = (modelId: string) => ({ modelId, prompt: 'wait', width: 1, height: 1 });

  it('a generation longer than the wait there is asked for again until it finishes, charged once', async () => {
    const { apiKey } = await seedAccount(atelier.app, { credits: { standard: 100 } });
    const providerBefore = await providerBalance();
    const submitted = await submitOk(atelier.url, apiKey, image('mdl_remote-slow'));
    const task = await waitForTask(atelier.url, apiKey, submitted.taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const pending = provider
      .logs()
      .split('\n')
      .filter((line) => line.includes('"statusCode":504'));
    assert.ok(pending.length >= 2, `160001 answered ${pending.length} time(s)`);
    // One generation there (mdl_test-slow: 3 credits), however often it was asked for.
    assert.equal(providerBefore - (await providerBalance()), 3);
    assert.deepEqual(await balances(atelier.url, apiKey), { standard: 95 });
  });

  it('a generation refused there for its input (160002, finish code 4) finishes with code 4, refunded', async () => {
    const { apiKey } = await seedAccount(atelier.app, { credits: { standard: 100 } });
    const submitted = await submitOk(atelier.url, apiKey, image('mdl_remote-refusing'));
    const task = await waitForTask(atelier.url, apiKey, submitted.taskId);
    assert.equal(task.finishCode, FinishCode.RejectedInput, task.finishMessage ?? '');
    const detail = await failureAudiences(atelier, task, accountWords.rejected);
    assert.match(
      detail,
      /finish code 4: Unreadable\./,
      'the upstream Atelier’s words, for the log',
    );
    assert.deepEqual(await balances(atelier.url, apiKey), { standard: 100 });
  });
});
