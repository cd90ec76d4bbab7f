import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

// Issue 21: live updates that survive a reconnect. Every update has a cursor; subscribing again
// with it replays what was missed from the task event log, then goes on live.

type Update = { taskId: string; status: string; finishCode: number | null; cursor: string };
const myTaskUpdates = `subscription S($after: String) {
  myTaskUpdates(after: $after) { taskId status finishCode cursor }
}`;
const taskUpdated = `subscription T($id: ID!, $after: String) {
  taskUpdated(taskId: $id, after: $after) { taskId status finishCode cursor }
}`;

describeEachBackend('task updates that survive a reconnect (issue 21)', (backend) => {
  let t: TestApp;
  let database: Database;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ t, database } = started);
  });

  const finished = (updates: readonly Update[], taskId: string) =>
    updates.some((u) => u.taskId === taskId && u.status === 'finished');

  it('myTaskUpdates after the last cursor: what was missed, then live, nothing twice', async (test) => {
    const { account, apiKey } = await seedAccount(t.app);
    const first = wsClient(t.url, { apiKey });
    const before = collect<{ myTaskUpdates: Update }>(first.client, myTaskUpdates);
    await t.logged((e) => e.msg === 'operation started' && e.accountId === account.id);
    const a = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'a' });
    const seen = (
      await before.until((so) =>
        finished(
          so.map((r) => r.data!.myTaskUpdates),
          a.taskId,
        ),
      )
    ).map((r) => r.data!.myTaskUpdates);
    const lastCursor = seen.at(-1)!.cursor;
    await first.client.dispose();

    // Offline: two more tasks run to the end.
    const b = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'b' });
    const c = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'c' });
    await waitForTask(t.url, apiKey, b.taskId);
    await waitForTask(t.url, apiKey, c.taskId);

    const second = wsClient(t.url, { apiKey });
    test.after(() => second.client.dispose());
    const after = collect<{ myTaskUpdates: Update }>(second.client, myTaskUpdates, {
      after: lastCursor,
    });
    const updates = () => after.results.map((r) => r.data!.myTaskUpdates);
    await after.until(() => finished(updates(), b.taskId) && finished(updates(), c.taskId));
    // Then live: a task submitted now arrives on the same subscription.
    const d = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'd' });
    await after.until(() => finished(updates(), d.taskId));

    const got = updates();
    assert.ok(!got.some((u) => u.taskId === a.taskId), 'nothing from before the cursor');
    for (const task of [b, c, d]) {
      const states = got.filter((u) => u.taskId === task.taskId).map((u) => u.status);
      assert.equal(states[0], 'queued', `${task.taskId}: ${states}`);
      assert.equal(states.filter((s) => s === 'finished').length, 1, `${task.taskId}: ${states}`);
      assert.equal(states.at(-1), 'finished');
    }
    assert.equal(new Set(got.map((u) => u.cursor)).size, got.length, 'every update once');
  });

  it('taskUpdated after a cursor goes on from there; after its finish it completes at once', async (test) => {
    const { apiKey } = await seedAccount(t.app);
    const task = await submitOk(t.url, apiKey, { modelId: 'mdl_test-quick', prompt: 'q' });
    const ws = wsClient(t.url, { apiKey });
    test.after(() => ws.client.dispose());
    const firstLook = collect<{ taskUpdated: Update }>(ws.client, taskUpdated, { id: task.taskId });
    const [initial] = await firstLook.until((so) => so.length >= 1);
    firstLook.unsubscribe();
    const cursor = initial!.data!.taskUpdated.cursor;
    await waitForTask(t.url, apiKey, task.taskId);

    const resumed = collect<{ taskUpdated: Update }>(ws.client, taskUpdated, {
      id: task.taskId,
      after: cursor,
    });
    assert.deepEqual(await resumed.ended(), {});
    const states = resumed.results.map((r) => r.data!.taskUpdated);
    assert.ok(!states.some((s) => s.cursor === cursor), 'the cursor’s own update is not repeated');
    assert.deepEqual(states.at(-1)!.status, 'finished');
    assert.equal(states.at(-1)!.finishCode, FinishCode.Ok);

    const afterFinish = collect<{ taskUpdated: Update }>(ws.client, taskUpdated, {
      id: task.taskId,
      after: states.at(-1)!.cursor,
    });
    assert.deepEqual(await afterFinish.ended(), {});
    assert.deepEqual(afterFinish.results, []);
  });

  it('a cursor that is not one, is another account’s, or is older than a day is refused', async (test) => {
    const mine = await seedAccount(t.app);
    const other = await seedAccount(t.app);
    const task = await submitOk(t.url, mine.apiKey, { modelId: 'mdl_test-fast', prompt: 'x' });
    await waitForTask(t.url, mine.apiKey, task.taskId);
    // The task's events happened 25 hours ago, by the clock that wrote them (the database's):
    // the cursor of its newest one is older than the log keeps.
    await sql`UPDATE task_events SET at = at - interval '25 hours' WHERE task_id = ${task.taskId}`.execute(
      database.db,
    );
    const ws = wsClient(t.url, { apiKey: mine.apiKey });
    test.after(() => ws.client.dispose());
    const look = collect<{ taskUpdated: Update }>(ws.client, taskUpdated, { id: task.taskId });
    const [first] = await look.until((so) => so.length >= 1);
    look.unsubscribe();
    const cursor = first!.data!.taskUpdated.cursor;

    const refusal = async (which: string, apiKey: string, after: string) => {
      const socket = wsClient(t.url, { apiKey });
      test.after(() => socket.client.dispose());
      const sub = collect<{ myTaskUpdates: Update }>(socket.client, myTaskUpdates, { after });
      const outcome = await sub
        .ended()
        .catch((error: Error) => assert.fail(`${which} was not refused: ${error.message}`));
      const errors = (outcome.error ?? sub.results[0]?.errors) as
        | { extensions?: Record<string, unknown>; message: string }[]
        | undefined;
      assert.ok(errors?.[0], JSON.stringify({ outcome, results: sub.results }));
      return errors[0];
    };
    for (const [which, apiKey, after] of [
      ['a cursor that is not one', mine.apiKey, 'not-a-cursor'],
      ["another account's cursor", other.apiKey, cursor],
    ] as const) {
      const error = await refusal(which, apiKey, after);
      assert.equal(error.extensions?.code, '120001');
      assert.equal(error.extensions?.field, 'after');
    }
    const expired = await refusal('a cursor older than a day', mine.apiKey, cursor);
    assert.equal(expired.extensions?.code, '120001');
    assert.equal(expired.extensions?.reason, 'cursor_expired');
    assert.match(expired.message, /reconcile through listContents/);
  });
});
