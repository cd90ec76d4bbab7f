import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { seedAccount } from '../../helpers/seed.ts';

describeEachBackend('workers wake on submission, not on a poll', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    // A poll interval far longer than the test: only the wake-up can explain a prompt start.
    t = await startTestApp(database, { env: { MODELS: testModels, TASK_POLL_MS: '60000' } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('a submission is picked up within a second, over and over', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    // Let every slot fall asleep on its long poll first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const { taskId } = await submitOk(t.url, apiKey, {
        modelId: 'mdl_test-fast',
        prompt: `wake ${i}`,
      });
      const task = await waitForTask(t.url, apiKey, taskId, undefined, 5_000);
      assert.equal(task.finishCode, FinishCode.Ok);
      assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
    }
  });
});
