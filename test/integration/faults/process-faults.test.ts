import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import {
  atelier,
  type RunningServer,
  shortLeaseWorkerEnv,
  startServer,
  startWorker,
} from '../../helpers/cli.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { generateImage, submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes } from '../../helpers/graphql.ts';
import { drained, invariantViolations } from '../../helpers/invariants.ts';
import { PrivatePostgres, withoutPrivatePostgres } from '../../helpers/private-postgres.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Faults of whole processes, on PostgreSQL with real `bin/atelier` processes: a worker killed
// under load, and the database itself going away and coming back. Each ends on the five
// invariants checked with SQL.

const workerEnv = shortLeaseWorkerEnv(2);

describe('a worker SIGKILLed under load [postgres: worker processes]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let database: Database;
  let api: TestApp;
  const workers: RunningServer[] = [];
  before(async () => {
    database = await createTestDatabase('postgres');
    api = await startTestApp(database, { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } });
  });
  after(async () => {
    for (const w of workers) await w.stop();
    await api.close();
    await database.close();
  });
  const worker = async () => {
    const started = await startWorker({
      ...workerEnv,
      DATABASE_URL: database.connectionUrl!,
      DATA_DIR: api.app.config.dataDir,
    });
    workers.push(started);
    return started;
  };

  it('its tasks are taken over and every one finishes exactly once, charged once', async () => {
    const { apiKey } = await seedAccount(api.app, { credits: { standard: 100 } });
    const [doomed] = [await worker(), await worker()];
    const submitted = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        submitOk(api.url, apiKey, { modelId: 'mdl_test-quick', prompt: `load ${i}` }),
      ),
    );
    // Kill it while it holds work: wait until it has claimed a task.
    const pid = `:${doomed!.child.pid}:`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const held = await database.db
        .selectFrom('tasks')
        .select('id')
        .where('status', '=', 'running')
        .where('lease_owner', 'like', `%${pid}%`)
        .execute();
      if (held.length > 0) break;
      if (Date.now() > deadline) assert.fail('the doomed worker never claimed a task');
      await sleep(20);
    }
    await doomed!.kill();
    await worker();
    await drained(database.db);

    for (const { taskId } of submitted)
      assert.equal(
        (await waitForTask(api.url, apiKey, taskId, undefined, 1)).finishCode,
        FinishCode.Ok,
      );
    const retried = await database.db
      .selectFrom('tasks')
      .select('attempts')
      .where('attempts', '>', 1)
      .execute();
    assert.ok(retried.length > 0, 'the killed worker’s tasks ran again elsewhere');
    assert.deepEqual(await invariantViolations(database.db), [], 'the five invariants held');
  });
});

describe('PostgreSQL restarted under load [private server, api and worker processes]', {
  skip:
    postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : withoutPrivatePostgres || false,
}, () => {
  let server: PrivatePostgres;
  let dataDir: string;
  const processes: RunningServer[] = [];
  before(async () => {
    server = await PrivatePostgres.create();
    dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-restart-'));
  });
  after(async () => {
    for (const p of processes) await p.stop();
    await server.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the API answers 100102/190000 while it is down and recovers without a restart; no work is lost', async () => {
    const env = { DATABASE_URL: server.url, DATA_DIR: dataDir, MODELS: testModels };
    assert.equal((await atelier(['migrate'], env)).code, 0);
    const account = JSON.parse(
      (
        await atelier(
          [
            'account',
            'create',
            '--alias',
            'restart',
            '--api-key-access',
            '--credits',
            'standard=1000',
          ],
          env,
        )
      ).stdout,
    ) as { id: string };
    const apiKey = (
      JSON.parse((await atelier(['apikey', 'create', '--account', account.id], env)).stdout) as {
        secret: string;
      }
    ).secret;
    const api = await startServer({ ...env, WORKER_CONCURRENCY: '0', TASK_POLL_MS: '100' });
    processes.push(api);
    processes.push(await startWorker({ ...env, ...workerEnv }));

    // Load: a client submitting every 50 ms, throughout.
    const answers: Array<{ phase: string; codes: string[]; ms: number }> = [];
    let phase = 'before';
    let running = true;
    const client = (async () => {
      for (let i = 0; running; i++) {
        const during = phase;
        const start = performance.now();
        const codes = await generateImage(api.url, apiKey, {
          modelId: 'mdl_test-fast',
          prompt: `load ${i}`,
          idempotencyKey: `load-${i}`,
        }).then(errorCodes, (error: Error) => [`no answer: ${error.message}`]);
        answers.push({ phase: during, codes, ms: performance.now() - start });
        await sleep(50);
      }
    })();

    /** Until the client has had `count` answers in `during` (`accepted`: with no error). */
    const answersIn = async (during: string, count: number, accepted = false) => {
      const by = Date.now() + 30_000;
      const counted = (a: (typeof answers)[number]) =>
        a.phase === during && (!accepted || a.codes.length === 0);
      while (answers.filter(counted).length < count) {
        if (Date.now() > by)
          assert.fail(`not ${count} answers ${during}: ${JSON.stringify(answers)}`);
        await sleep(20);
      }
    };

    await answersIn('before', 5, true); // under load: submissions go through
    phase = 'stopping';
    await server.stop();
    phase = 'down';
    // Not a wait for something: the outage's length is the fault under test. It outlasts the
    // worker's lease (1.5 s) and the longest answer allowed while down (2 s, asserted below).
    await sleep(3_000);
    phase = 'restarting';
    await server.start();
    // Recovered: a submission succeeds again, through the same API process.
    const recoveredBy = Date.now() + 30_000;
    for (;;) {
      const last = answers.at(-1);
      if (last?.phase !== 'down' && last?.codes.length === 0 && phase === 'restarting') break;
      if (Date.now() > recoveredBy)
        assert.fail(`not recovered: ${JSON.stringify(answers.at(-1))}\n${api.stderr()}`);
      await sleep(50);
    }
    phase = 'after';
    await answersIn('after', 5);
    running = false;
    await client;

    assert.equal(api.child.exitCode, null, `the API process died:\n${api.stderr()}`);
    const down = answers.filter((a) => a.phase === 'down');
    assert.ok(down.length > 5, `${down.length} answers while down`);
    for (const a of down) {
      assert.equal(a.codes.length, 1, JSON.stringify(a));
      assert.ok(['100102', '190000'].includes(a.codes[0]!), JSON.stringify(a));
      assert.ok(a.ms < 2_000, `an answer took ${Math.round(a.ms)} ms`);
    }
    assert.ok(answers.filter((a) => a.phase === 'after').every((a) => a.codes.length === 0));
    assert.equal(api.child.exitCode, null, `the API process died:\n${api.stderr()}`);
    assert.equal(
      processes[1]!.child.exitCode,
      null,
      `the worker process died:\n${processes[1]!.stderr()}`,
    );

    const database = await openDatabase({ backend: 'postgres', url: server.url, poolSize: 2 });
    try {
      await drained(database.db);
      const failed = await database.db
        .selectFrom('tasks')
        .select(['id', 'finish_code', 'finish_message'])
        .where('finish_code', '<>', FinishCode.Ok)
        .execute();
      assert.deepEqual(failed, [], 'every accepted submission finished successfully');
      assert.deepEqual(await invariantViolations(database.db), [], 'the five invariants held');
    } finally {
      await database.close();
    }
  });
});
