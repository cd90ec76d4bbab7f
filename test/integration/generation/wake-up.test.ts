import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { TaskRunner } from '../../../src/jobs/task-runner.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { seedAccount } from '../../helpers/seed.ts';

/** Resolves once `condition` holds, checking it on each turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describeEachBackend('workers wake on submission, not on a poll', (backend) => {
  let database: Database;
  let t: TestApp;
  let runner: TaskRunner;
  const slots = 2;
  before(async () => {
    database = await createTestDatabase(backend);
    // A poll interval of a minute (the most there is): a slot asleep on it starts a task only
    // when woken.
    const env = { MODELS: testModels, TASK_POLL_MS: '60000', WORKER_CONCURRENCY: '0' };
    t = await startTestApp(database, { env });
    runner = t.app.startWorkers(silentLogger, slots);
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('a submission wakes a sleeping slot, over and over', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    for (let i = 0; i < 5; i++) {
      await until(() => runner.idleSlots === slots); // every slot asleep on its poll
      const { taskId } = await submitOk(t.url, apiKey, {
        modelId: 'mdl_test-fast',
        prompt: `wake ${i}`,
      });
      // Its deadline is far inside the poll: only the wake-up can have started it.
      const task = await waitForTask(t.url, apiKey, taskId, undefined, 30_000);
      assert.equal(task.finishCode, FinishCode.Ok);
    }
  });
});

describeEachBackend('a finish frees its account’s place for the claim made with it', (backend) => {
  let t: TestApp;
  // One place per account, and a poll of a minute: a slot asleep on it would not start the
  // second task inside the test's deadline.
  const env = {
    MODELS: testModels,
    TASK_POLL_MS: '60000',
    WORKER_CONCURRENCY: '0',
    ACCOUNT_MAX_RUNNING_TASKS: '1',
  };
  withTestApp(backend, { env }, (started) => {
    ({ t } = started);
  });

  it('the account’s next task starts without waiting for a poll', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const first = await submitOk(t.url, apiKey, { modelId: 'mdl_test-quick', prompt: 'a' });
    const second = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'b' });
    // The slot claims A; A's finish carries the slot's next claim, which must see A finished:
    // while A held its account's one place, a claim would find nothing and the slot sleep.
    t.app.startWorkers(silentLogger, 1);
    const a = await waitForTask(t.url, apiKey, first.taskId, undefined, 30_000);
    assert.equal(a.finishCode, FinishCode.Ok);
    // Its deadline is far inside the poll: only a claim made after A's finish can start it.
    const b = await waitForTask(t.url, apiKey, second.taskId, undefined, 30_000);
    assert.equal(b.finishCode, FinishCode.Ok);
  });
});
