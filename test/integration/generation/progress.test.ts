import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { fakeModel, submitOk } from '../../helpers/generation.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

// An engine's progress is the task's: every change a worker writes reaches a GraphQL
// subscription and an MCP wait as it happens, not only the start and the end. The fake engine
// reports ten steps over two seconds; the runner writes at most four a second.
const models = JSON.stringify([fakeModel('mdl_test-steady', { durationMs: 2_000 })]);
const taskUpdated = 'subscription T($id: ID!) { taskUpdated(taskId: $id) { status progress } }';

/** Values that climb from 0 to 1 and stop in between at least once. */
function assertClimbs(values: readonly number[]) {
  assert.ok(
    values.some((p) => p > 0 && p < 1),
    `a value between 0 and 1 in ${values.join(', ')}`,
  );
  assert.deepEqual(
    values,
    [...values].sort((a, b) => a - b),
    'never goes back',
  );
  assert.equal(values.at(-1), 1);
}

describeEachBackend('task progress reaches those who watch (issue 17)', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: models } }, (started) => {
    ({ t } = started);
  });

  it('a taskUpdated subscription sees the progress climb', async () => {
    const { apiKey } = await seedAccount(t.app);
    const ws = wsClient(t.url, { apiKey });
    try {
      const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_test-steady', prompt: 'x' });
      const sub = collect<{ taskUpdated: { status: string; progress: number } }>(
        ws.client,
        taskUpdated,
        { id: taskId },
      );
      await sub.finished;
      assertClimbs(sub.results.map((r) => r.data!.taskUpdated.progress));
    } finally {
      await ws.client.dispose();
    }
  });

  it('wait_for_generation sends progress notifications in between, with the percentage', async () => {
    const { account, apiKey } = await seedAccount(t.app);
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_test-steady', prompt: 'x' });
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      const notes: { progress: number; message?: string }[] = [];
      await client.callTool(
        { name: 'wait_for_generation', arguments: { task_id: taskId, timeout_seconds: 30 } },
        undefined,
        { onprogress: (p) => notes.push(p) },
      );
      const values = notes.map((n) => n.progress);
      assertClimbs(values);
      assert.equal(new Set(values).size, values.length, 'each notification climbs (MCP rule)');
      const between = notes.find((n) => n.progress > 0 && n.progress < 1)!;
      assert.equal(between.message, `running, ${Math.floor(between.progress * 100)}%`);
      // At 1 the engine is done: the result is being stored, or is stored, when the watch sees it.
      assert.match(notes.at(-1)!.message!, /^(finishing|finished)$/);
    } finally {
      await client.close();
    }
  });
});
