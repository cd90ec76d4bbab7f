import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { seedAccount } from '../../helpers/seed.ts';

const taskQuery = 'query T($id: ID!) { getTask(taskId: $id) { status waitingReason } }';

describeEachBackend('a cap on running tasks per account', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(
    backend,
    { env: { MODELS: testModels, WORKER_CONCURRENCY: '3', ACCOUNT_MAX_RUNNING_TASKS: '1' } },
    (started) => {
      ({ database, t } = started);
    },
  );

  it('holds an account’s next task (saying why) while others’ run, then runs it', async () => {
    const a = await seedAccount(t.app);
    const b = await seedAccount(t.app);
    const first = await submitOk(t.url, a.apiKey, { modelId: 'mdl_test-slow', prompt: 'first' });
    await waitForTask(t.url, a.apiKey, first.taskId, (task) => task.status === 'running');
    const second = await submitOk(t.url, a.apiKey, { modelId: 'mdl_test-fast', prompt: 'second' });
    const other = await submitOk(t.url, b.apiKey, { modelId: 'mdl_test-fast', prompt: 'other' });

    // B is not held up by A's limit; A's second task waits, and says why.
    assert.equal((await waitForTask(t.url, b.apiKey, other.taskId)).finishCode, FinishCode.Ok);
    const waiting = await graphql<{ getTask: { status: string; waitingReason: string | null } }>(
      t.url,
      { query: taskQuery, variables: { id: second.taskId }, apiKey: a.apiKey },
    );
    assert.deepEqual(waiting.body.data?.getTask, {
      status: 'queued',
      waitingReason: 'account_concurrency_limit',
    });

    assert.equal((await waitForTask(t.url, a.apiKey, second.taskId)).finishCode, FinishCode.Ok);
    const [one, two] = await Promise.all(
      [first.taskId, second.taskId].map((id) =>
        database.db
          .selectFrom('tasks')
          .select(['started_at', 'finished_at'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow(),
      ),
    );
    assert.ok(two!.started_at! >= one!.finished_at!, 'never two of A’s tasks at once');
    const done = await graphql<{ getTask: { status: string; waitingReason: string | null } }>(
      t.url,
      { query: taskQuery, variables: { id: second.taskId }, apiKey: a.apiKey },
    );
    assert.equal(done.body.data?.getTask.waitingReason, null);
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});
