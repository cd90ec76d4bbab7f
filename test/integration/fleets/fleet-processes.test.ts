import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import {
  type RunningServer,
  shortLeaseWorkerEnv,
  startServer,
  startWorker,
} from '../../helpers/cli.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { attemptsOf, capsExceeded } from '../../helpers/fleets.ts';
import { balances, fakeModel, submitOk } from '../../helpers/generation.ts';
import { drained, invariantViolations } from '../../helpers/invariants.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 31 §2: a backend's cap is Atelier's, held in the database, whichever process claims.
// Two `bin/atelier serve` processes take submissions and two `bin/atelier worker` processes run
// them on one PostgreSQL; a worker SIGKILLed mid-run leaves its slot held by its lease until the
// lease expires, then the slot comes back and the task runs again, once.

const pooled = (modelId: string, backends: Array<[string, number, number]>) => ({
  ...fakeModel(modelId, {}),
  engine: undefined,
  engineOptions: undefined,
  backends: backends.map(([name, durationMs, maxConcurrent]) => ({
    name,
    engine: 'fake',
    engineOptions: { durationMs },
    maxConcurrent,
  })),
});
const models = JSON.stringify([
  pooled('mdl_shared', [
    ['a', 200, 2],
    ['b', 200, 1],
  ]),
  pooled('mdl_one-slot', [['only', 1500, 1]]),
]);

describe('a pool’s caps across processes [postgres: two api and two worker processes]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let database: Database;
  let seeder: TestApp;
  const apis: RunningServer[] = [];
  const workers: RunningServer[] = [];

  before(async () => {
    database = await createTestDatabase('postgres');
    // In process, only to seed accounts; it runs no tasks.
    seeder = await startTestApp(database, { env: { MODELS: models, WORKER_CONCURRENCY: '0' } });
    const env = {
      DATABASE_URL: database.connectionUrl!,
      DATA_DIR: seeder.app.config.dataDir,
      MODELS: models,
      ACCOUNT_MAX_RUNNING_TASKS: '0',
    };
    for (let i = 0; i < 2; i++) {
      apis.push(await startServer({ ...env, WORKER_CONCURRENCY: '0' }));
      // Two slots each: neither worker can take all three of mdl_shared's, both together
      // have more than its caps, which must hold the runs back.
      workers.push(await startWorker({ ...shortLeaseWorkerEnv(2), ...env }));
    }
  });
  after(async () => {
    for (const p of [...workers, ...apis]) await p.stop();
    await seeder?.close();
    await database?.close();
  });

  it('30 tasks through two API processes, run by two workers: no backend over its cap, each charged once', async () => {
    const { apiKey } = await seedAccount(seeder.app, { credits: { standard: 1000 } });
    for (let i = 0; i < 30; i++) {
      await submitOk(apis[i % 2]!.url, apiKey, { modelId: 'mdl_shared', prompt: `p ${i}` });
    }
    await drained(database.db);
    const rows = await database.db
      .selectFrom('tasks')
      .select('finish_code')
      .where('model_id', '=', 'mdl_shared')
      .execute();
    assert.equal(rows.length, 30);
    assert.ok(rows.every((r) => r.finish_code === FinishCode.Ok));
    // Three runs at once at some point: more than one worker's two slots, so both ran.
    const { rows: peak } = await sql<{ at_once: number }>`
      SELECT max(n)::int AS at_once FROM (
        SELECT count(*) AS n FROM task_attempts a
        JOIN task_attempts o ON o.backend_id LIKE 'mdl_shared/%'
          AND o.started_at <= a.started_at AND o.ended_at > a.started_at
        WHERE a.backend_id LIKE 'mdl_shared/%'
        GROUP BY a.task_id, a.attempt) runs`.execute(database.db);
    assert.equal(peak[0]?.at_once, 3, 'the pool’s three slots were full at once');
    assert.deepEqual(await capsExceeded(database.db), []);
    const backends = await database.db
      .selectFrom('task_attempts')
      .select('backend_id')
      .distinct()
      .where('backend_id', 'like', 'mdl_shared/%')
      .execute();
    assert.equal(backends.length, 2, 'both backends ran tasks');
    assert.deepEqual(await balances(apis[0]!.url, apiKey), { standard: 1000 - 30 * 3 });
  });

  it('a worker SIGKILLed mid-run: its slot is held until its lease expires, then the task runs again, once', async () => {
    const { apiKey } = await seedAccount(seeder.app, { credits: { standard: 100 } });
    const first = await submitOk(apis[0]!.url, apiKey, { modelId: 'mdl_one-slot', prompt: 'x' });
    const second = await submitOk(apis[1]!.url, apiKey, { modelId: 'mdl_one-slot', prompt: 'y' });
    let holder: { lease_owner: string | null; id: string } | undefined;
    while (holder === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      holder = await database.db
        .selectFrom('tasks')
        .select(['id', 'lease_owner'])
        .where('model_id', '=', 'mdl_one-slot')
        .where('status', '=', 'running')
        .executeTakeFirst();
    }
    const pid = holder.lease_owner?.split(':')[1];
    const victim = workers.findIndex((w) => String(w.child.pid) === pid);
    assert.notEqual(victim, -1, `a worker process holds ${holder.id}`);
    await workers[victim]!.kill();
    workers.splice(victim, 1);

    await drained(database.db);
    const tasks = await database.db
      .selectFrom('tasks')
      .select(['id', 'finish_code', 'attempts'])
      .where('id', 'in', [first.taskId, second.taskId])
      .execute();
    assert.ok(
      tasks.every((task) => task.finish_code === FinishCode.Ok),
      JSON.stringify(tasks),
    );
    assert.deepEqual(
      (await attemptsOf(database.db, holder.id)).map((a) => a.outcome),
      ['lost', 'ok'],
      'its first run was lost with its worker; its second finished it',
    );
    // One slot: the lost run, the rerun and the other task never overlapped.
    assert.deepEqual(await capsExceeded(database.db), []);
    assert.deepEqual(await balances(apis[1]!.url, apiKey), { standard: 100 - 2 * 3 });
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});
