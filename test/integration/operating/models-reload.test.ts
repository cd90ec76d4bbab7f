import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer, startWorker } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase, createTestDatabase } from '../../helpers/database.ts';
import { balances, fakeModel, submitOk, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 32 §4: models without a restart. When MODELS comes from a file (CONFIG_FILE),
// `bin/atelier models reload` and SIGHUP check the new catalogue whole and put it in use on
// every node, or change nothing and list every problem. A run under way keeps its definition.

const modelIds = `{ listModels(first: 100) { nodes { modelId pricing { credits } } } }`;

interface Listed {
  listModels: { nodes: Array<{ modelId: string; pricing: { credits: number } }> };
}

/** The models a node serves, as any client reads them. */
async function served(url: string): Promise<Map<string, number>> {
  const answer = await graphql<Listed>(url, { query: modelIds });
  assert.deepEqual(errorCodes(answer), []);
  return new Map(answer.body.data!.listModels.nodes.map((m) => [m.modelId, m.pricing.credits]));
}

/** Reads until `check` holds: a reload announced to another process arrives when it arrives. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 15_000; !(await check()); ) {
    assert.ok(Date.now() < deadline, `never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function writeModels(file: string, models: unknown[], extra: Record<string, unknown> = {}) {
  writeFileSync(file, JSON.stringify({ MODELS: models, ...extra }));
}

const priced = (modelId: string, credits: number) => ({
  ...fakeModel(modelId, {}),
  pricing: { unit: 'image', credits, category: null },
});

describe('models reload on the embedded database (issue 32 §4)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'atelier-reload-'));
  const file = path.join(dir, 'atelier.json');
  const env = { DATA_DIR: path.join(dir, 'data'), CONFIG_FILE: file };
  let server: RunningServer;
  // At info, the server logs each reload (the SIGHUP case waits for that line).
  before(async () => {
    writeModels(file, [priced('mdl_reload-one', 3)]);
    server = await startServer({ ...env, LOG_LEVEL: 'info' });
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the command checks the file and swaps the catalogue in the running server', async () => {
    writeModels(file, [priced('mdl_reload-one', 5), priced('mdl_reload-two', 2)]);
    const run = await atelier(['models', 'reload'], env);
    assert.equal(run.code, 0, run.stderr);
    const reloaded = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [reloaded.added, reloaded.removed, reloaded.changed],
      [['mdl_reload-two'], [], ['mdl_reload-one']],
    );
    const now = await served(server.url);
    assert.equal(now.get('mdl_reload-one'), 5);
    assert.equal(now.get('mdl_reload-two'), 2);

    const audit = JSON.parse((await atelier(['audit', '--action', 'models.reloaded'], env)).stdout);
    assert.deepEqual(audit.nodes[0].detail, {
      added: ['mdl_reload-two'],
      removed: [],
      changed: ['mdl_reload-one'],
    });
    assert.equal(audit.nodes[0].actor.credential, 'cli');
  });

  it('a file with problems changes nothing and every problem is listed', async () => {
    const before = await served(server.url);
    writeModels(file, [
      priced('mdl_reload-one', 7),
      { ...fakeModel('mdl_reload-nowhere', {}), engine: 'no-such-engine' },
      {
        ...fakeModel('mdl_reload-keyless', {}),
        engine: 'openai-images',
        engineOptions: {
          baseUrl: 'https://api.example.test/v1',
          model: 'x',
          apiKeyEnv: 'UNSET_KEY',
        },
      },
    ]);
    const run = await atelier(['models', 'reload'], env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /UNSET_KEY/);
    writeModels(file, [
      priced('mdl_reload-one', 7),
      { ...fakeModel('mdl_reload-nowhere', {}), engine: 'no-such-engine' },
      { ...fakeModel('mdl_reload-spoken', {}), engine: 'espeak' },
    ]);
    const bound = await atelier(['models', 'reload'], env);
    assert.equal(bound.code, 1);
    // Checked by the command before it reaches the server: every problem, one line each.
    assert.match(bound.stderr, /Invalid configuration:/);
    assert.match(
      bound.stderr,
      /MODELS: mdl_reload-nowhere: engine "no-such-engine" does not exist/,
    );
    assert.match(
      bound.stderr,
      /MODELS: mdl_reload-spoken: engine "espeak" makes speech, not image/,
    );
    assert.deepEqual(await served(server.url), before, 'nothing changed');
  });

  it('SIGHUP reloads the file the same way', async () => {
    writeModels(file, [priced('mdl_reload-one', 4)]);
    server.child.kill('SIGHUP');
    await server.logged('SIGHUP: models reloaded');
    const now = await served(server.url);
    assert.equal(now.get('mdl_reload-one'), 4);
    assert.equal(now.has('mdl_reload-two'), false);

    writeModels(file, [{ ...fakeModel('mdl_reload-one', {}), engine: 'no-such-engine' }]);
    server.child.kill('SIGHUP');
    await server.logged('SIGHUP: models not reloaded');
    assert.deepEqual(await served(server.url), now, 'a bad file changes nothing');
  });
});

describe('models reload reaches every node [postgres: api and worker processes]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'atelier-reload-pg-'));
  const file = path.join(dir, 'atelier.json');
  const processes: RunningServer[] = [];
  let drop: () => Promise<void>;
  let env: Record<string, string>;
  let api: RunningServer;
  before(async () => {
    const database = await createEmptyPostgresDatabase();
    drop = database.drop;
    env = { DATABASE_URL: database.url, DATA_DIR: path.join(dir, 'data'), CONFIG_FILE: file };
    writeModels(file, [priced('mdl_fleet-one', 3)]);
    assert.equal((await atelier(['migrate'], env)).code, 0);
    api = await startServer({ ...env, WORKER_CONCURRENCY: '0' });
    processes.push(api);
    processes.push(await startWorker({ ...env, WORKER_CONCURRENCY: '1', TASK_POLL_MS: '100' }));
  });
  after(async () => {
    for (const p of processes) await p.stop();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the command line, on its own process, swaps the catalogue of the API node and the worker', async () => {
    const key = JSON.parse(
      (
        await atelier(
          [
            'account',
            'create',
            '--alias',
            'reloader',
            '--credits',
            'standard=20',
            '--api-key-access',
          ],
          env,
        )
      ).stdout,
    ) as { id: string };
    const { secret } = JSON.parse(
      (await atelier(['apikey', 'create', '--account', key.id], env)).stdout,
    ) as { secret: string };

    writeModels(file, [priced('mdl_fleet-one', 3), priced('mdl_fleet-two', 2)]);
    const run = await atelier(['models', 'reload'], env);
    assert.equal(run.code, 0, run.stderr);
    // Compared with what the fleet had, not with the file this process read moments before.
    assert.deepEqual(JSON.parse(run.stdout).added, ['mdl_fleet-two']);
    const audit = await atelier(['audit', '--action', 'models.reloaded'], env);
    assert.deepEqual(JSON.parse(audit.stdout).nodes[0].detail, {
      added: ['mdl_fleet-two'],
      removed: [],
      changed: [],
    });
    await until(async () => (await served(api.url)).has('mdl_fleet-two'), 'the API node lists it');
    // Run by the worker process: it knows the model only if it reloaded too.
    const { taskId } = await submitOk(api.url, secret, { modelId: 'mdl_fleet-two', prompt: 'new' });
    const task = await waitForTask(api.url, secret, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    assert.deepEqual(await balances(api.url, secret), { standard: 18 });
  });
});

describe('a run under way keeps its model through a reload (issue 32 §4)', () => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: {
        MODELS: JSON.stringify([fakeModel('mdl_slow', { durationMs: 1500, steps: 3 })]),
        WORKER_CONCURRENCY: '1',
        ACCOUNT_MAX_RUNNING_TASKS: '0',
      },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
  });

  it('the running task finishes on its definition; one still queued for a removed model fails, refunded', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const running = await submitOk(t.url, apiKey, { modelId: 'mdl_slow', prompt: 'first' });
    await waitForTask(t.url, apiKey, running.taskId, (task) => task.status === 'running');
    const queued = await submitOk(t.url, apiKey, { modelId: 'mdl_slow', prompt: 'second' });

    const reloaded = await t.app.modelsReload.reload({ models: [], secrets: new Map() });
    assert.deepEqual(reloaded.removed, ['mdl_slow']);
    const gone = await graphql(t.url, { query: '{ getModel(modelId: "mdl_slow") { modelId } }' });
    assert.deepEqual(errorCodes(gone), ['140004']);

    const first = await waitForTask(t.url, apiKey, running.taskId);
    assert.equal(first.finishCode, FinishCode.Ok, first.finishMessage ?? '');
    const second = await waitForTask(t.url, apiKey, queued.taskId);
    assert.equal(second.finishCode, FinishCode.EngineFailure);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 7 });
  });
});
