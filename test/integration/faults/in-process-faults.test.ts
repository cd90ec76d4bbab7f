import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import {
  balances,
  generateImage,
  getTask,
  submitOk,
  testModels,
  waitForTask,
} from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { drained, invariantViolations } from '../../helpers/invariants.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Faults a single process meets (an engine that always crashes, clients racing their own
// cancellations), each ending on the five invariants checked with SQL.

const cancel = (url: string, apiKey: string, taskId: string) =>
  graphql<{ cancelTask: { status: string; finishCode: number | null } | null }>(url, {
    query: 'mutation C($id: ID!) { cancelTask(taskId: $id) { status finishCode } }',
    variables: { id: taskId },
    apiKey,
  });

describeEachBackend('a poison task that crashes its engine every time', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(
    backend,
    { env: { MODELS: testModels, TASK_MAX_ATTEMPTS: '3', WORKER_CONCURRENCY: '2' } },
    (started) => {
      ({ database, t } = started);
    },
  );

  it('is given up after its attempts with code 1, refunded once, while the work around it finishes', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 30 } });
    const poison = await submitOk(t.url, apiKey, { modelId: 'mdl_test-crash', prompt: 'boom' });
    const healthy = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: `fine ${i}` }),
      ),
    );
    const failed = await waitForTask(t.url, apiKey, poison.taskId);
    assert.equal(failed.finishCode, FinishCode.EngineFailure);
    for (const { taskId } of healthy)
      assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, FinishCode.Ok);

    const row = await database.db
      .selectFrom('tasks')
      .select('attempts')
      .where('id', '=', poison.taskId)
      .executeTakeFirstOrThrow();
    assert.equal(row.attempts, 3, 'every attempt was spent, no more');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 30 - 4 * 3 }, 'poison refunded');

    // The workers survived the crashes: a new submission still runs.
    const after = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'later' });
    assert.equal((await waitForTask(t.url, apiKey, after.taskId)).finishCode, FinishCode.Ok);
    assert.deepEqual(await invariantViolations(database.db), [], 'the five invariants held');
  });
});

describeEachBackend('50 concurrent submissions racing cancellations', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(
    backend,
    { env: { MODELS: testModels, WORKER_CONCURRENCY: '4', TASK_POLL_MS: '50' } },
    (started) => {
      ({ database, t } = started);
    },
  );

  it('charge once, refund at most once, and finish each exactly once', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } });
    const models = ['mdl_test-fast', 'mdl_test-quick', 'mdl_test-slow'];
    // 50 submissions, 15 of them retries racing their original (same idempotency key); half
    // are cancelled at once (racing the claim), slow ones also later (racing the engine), some
    // twice at the same moment.
    const submissions = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const key = `race-${i % 35}`;
        const res = await generateImage(t.url, apiKey, {
          modelId: models[(i % 35) % 3],
          prompt: `race ${i % 35}`,
          idempotencyKey: key,
        });
        assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
        const submitted = res.body.data!.generateImage!;
        const slow = (i % 35) % 3 === 2;
        if (i % 2 === 0) {
          const answers = await Promise.all(
            (i % 4 === 0 ? [1, 2] : [1]).map(() => cancel(t.url, apiKey, submitted.taskId)),
          );
          for (const answer of answers) assert.deepEqual(errorCodes(answer), []);
        } else if (slow) {
          await sleep(300 + (i % 5) * 100);
          assert.deepEqual(errorCodes(await cancel(t.url, apiKey, submitted.taskId)), []);
        }
        return { key, ...submitted };
      }),
    );
    await drained(database.db);

    // One content per idempotency key, whoever won the race.
    const byKey = new Map<string, Set<string>>();
    for (const s of submissions) byKey.set(s.key, (byKey.get(s.key) ?? new Set()).add(s.contentId));
    assert.equal(byKey.size, 35);
    for (const [key, ids] of byKey) assert.equal(ids.size, 1, `${key} made ${ids.size} contents`);

    const outcomes = new Map<number, number>();
    for (const id of new Set(submissions.map((s) => s.taskId))) {
      const task = await getTask(t.url, apiKey, id);
      assert.equal(task.status, 'finished');
      outcomes.set(task.finishCode!, (outcomes.get(task.finishCode!) ?? 0) + 1);
    }
    assert.ok((outcomes.get(2) ?? 0) > 0, 'some cancellations won');
    assert.ok((outcomes.get(0) ?? 0) > 0, 'some generations finished');
    assert.deepEqual(
      [...outcomes.keys()].filter((code) => code !== 0 && code !== 2),
      [],
    );

    // The balance is the opening grant less what finished successfully.
    const succeeded = outcomes.get(0) ?? 0;
    assert.deepEqual(await balances(t.url, apiKey), { standard: 1000 - succeeded * 3 });
    assert.deepEqual(await invariantViolations(database.db), [], 'the five invariants held');
  });
});
