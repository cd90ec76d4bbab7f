import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer, startWorker } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

type Update = { taskId: string; status: string; finishCode: number | null; cursor: string };

describe('task updates across processes [postgres]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  const processes: RunningServer[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-multi-'));
  after(async () => {
    for (const p of processes) await p.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a subscriber on API process 1 sees a task submitted through API process 2 finish on a worker process, and resumes on process 2', async (t) => {
    const database = await createEmptyPostgresDatabase();
    t.after(() => database.drop());
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, MODELS: testModels };
    assert.equal((await atelier(['migrate'], env)).code, 0);
    const account = JSON.parse(
      (
        await atelier(
          [
            'account',
            'create',
            '--alias',
            'multi',
            '--api-key-access',
            '--credits',
            'standard=100',
          ],
          env,
        )
      ).stdout,
    ) as { id: string };
    const { secret } = JSON.parse(
      (await atelier(['apikey', 'create', '--account', account.id], env)).stdout,
    ) as { secret: string };

    // Debug logs: the WebSocket says when the subscription starts, so nothing is submitted before.
    const api1 = await startServer({ ...env, WORKER_CONCURRENCY: '0', LOG_LEVEL: 'debug' });
    processes.push(api1);
    const api2 = await startServer({ ...env, WORKER_CONCURRENCY: '0' });
    processes.push(api2);
    const worker = await startWorker({ ...env, TASK_POLL_MS: '60000' });
    processes.push(worker);

    const ws = wsClient(api1.url, { apiKey: secret });
    t.after(() => ws.client.dispose());
    const updates = collect<{ myTaskUpdates: Update }>(
      ws.client,
      'subscription { myTaskUpdates { taskId status finishCode cursor } }',
    );
    await api1.logged('"msg":"operation started"');
    const { taskId } = await submitOk(api2.url, secret, {
      modelId: 'mdl_test-quick',
      prompt: 'across processes',
    });

    await updates.until((so) => so.some((r) => r.data?.myTaskUpdates.status === 'finished'));
    updates.unsubscribe();
    const statuses = updates.results.map((r) => r.data?.myTaskUpdates);
    assert.ok(statuses.every((s) => s?.taskId === taskId));
    const { cursor: _, ...last } = statuses.at(-1)!;
    assert.deepEqual(last, { taskId, status: 'finished', finishCode: FinishCode.Ok });
    assert.ok(
      statuses.some((s) => s?.status === 'running'),
      'the worker’s claim reached API process 1 too',
    );

    // Issue 21: the subscriber goes away with its last cursor; tasks finish on the worker
    // meanwhile; it comes back to the other API process and misses nothing.
    const lastCursor = updates.results.at(-1)!.data!.myTaskUpdates.cursor;
    await ws.client.dispose();
    const missed = await Promise.all(
      ['one', 'two', 'three'].map((prompt) =>
        submitOk(api1.url, secret, { modelId: 'mdl_test-fast', prompt }),
      ),
    );
    for (const { taskId: id } of missed) await waitForTask(api1.url, secret, id);
    const back = wsClient(api2.url, { apiKey: secret });
    t.after(() => back.client.dispose());
    const resumed = collect<{ myTaskUpdates: Update }>(
      back.client,
      'subscription S($after: String) { myTaskUpdates(after: $after) { taskId status finishCode cursor } }',
      { after: lastCursor },
    );
    const finishedIds = (so: typeof resumed.results) =>
      new Set(
        so
          .map((r) => r.data!.myTaskUpdates)
          .filter((u) => u.status === 'finished')
          .map((u) => u.taskId),
      );
    await resumed.until((so) => missed.every((m) => finishedIds(so).has(m.taskId)));
    const replayed = resumed.results.map((r) => r.data!.myTaskUpdates);
    assert.ok(!replayed.some((u) => u.taskId === taskId), 'nothing from before the cursor');
    for (const m of missed) {
      const states = replayed.filter((u) => u.taskId === m.taskId).map((u) => u.status);
      assert.deepEqual(
        states.filter((s) => s === 'finished'),
        ['finished'],
        states.join(),
      );
      assert.equal(states[0], 'queued', states.join());
    }
    assert.equal(new Set(replayed.map((u) => u.cursor)).size, replayed.length);
  });
});
