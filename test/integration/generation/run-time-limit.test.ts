import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { balances, fakeModel, submitOk, waitForTask } from '../../helpers/generation.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { gqlOk } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

// A run past its model's maxRunSeconds is stopped and finished with code 3, refunded: an engine
// that honours its abort signal and one that ignores it alike, and the slot is free again.
const models = JSON.stringify([
  fakeModel('mdl_test-endless', { durationMs: 600_000 }, { maxRunSeconds: 1 }),
  fakeModel('mdl_test-stuck', { durationMs: 600_000, ignoreAbort: true }, { maxRunSeconds: 1 }),
  fakeModel('mdl_test-fast', {}),
]);

describeEachBackend('the maximum run time of a model', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: models, WORKER_CONCURRENCY: '1' } }, (started) => {
    ({ database, t } = started);
  });

  for (const modelId of ['mdl_test-endless', 'mdl_test-stuck']) {
    it(`stops ${modelId} at its deadline: code 3, credits back, the worker free`, async () => {
      const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
      const { contentId, taskId } = await submitOk(t.url, apiKey, { modelId, prompt: 'forever' });
      assert.deepEqual(await balances(t.url, apiKey), { standard: 7 }, 'charged at submission');

      const task = await waitForTask(t.url, apiKey, taskId, undefined, 20_000);
      assert.equal(task.finishCode, FinishCode.TimedOut);
      assert.match(task.finishMessage ?? '', /limit of 1 seconds/);
      assert.deepEqual(await balances(t.url, apiKey), { standard: 10 }, 'refunded');
      const { getContent } = await gqlOk<{ getContent: { creditsRefunded: number } }>(
        t.url,
        apiKey,
        'query C($id: ID!) { getContent(contentId: $id) { creditsRefunded } }',
        { id: contentId },
      );
      assert.equal(getContent.creditsRefunded, 3, 'refunded once');

      // The only worker slot is free: the next task runs to the end.
      const next = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'next' });
      assert.equal((await waitForTask(t.url, apiKey, next.taskId)).finishCode, FinishCode.Ok);
      assert.deepEqual(await invariantViolations(database.db), [], 'the five invariants held');
    });
  }
});
