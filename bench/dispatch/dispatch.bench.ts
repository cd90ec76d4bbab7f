// Dispatch over a pool of backends (issue 31), two measures:
//
// 1. Makespan: 200 tasks of a fixed 200 ms on 4 backends of 2 slots each (the fake engine),
//    from the moment the workers start to the last finish, against the ideal makespan
//    (tasks × run time / slots = 5 s). The target is ≥ 0.9× ideal (at most about 5.6 s).
// 2. Claiming with a saturated pool's deep queue: the time of one claim of another model's
//    task with 10,000 tasks queued behind a full pool, against the same claim with none queued
//    there (the claim skips the saturated pool at the cost of one index probe).
//
// On PostgreSQL (BENCH_DATABASE_URL or TEST_DATABASE_URL), else on the embedded database.
//
//   node bench/dispatch/dispatch.bench.ts [--tasks 200] [--run-ms 200] [--queued 10000]
//     [--claims 300] [--rounds 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config/config.ts';
import { buildCore, type Core } from '../../src/core.ts';
import type { Actor } from '../../src/domain/actor.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { claimTask, countTasks } from '../../src/store/task-queue.store.ts';
import { report } from '../report.ts';
import { benchPostgres, withScratchDatabase } from '../scratch-database.ts';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '200' },
    'run-ms': { type: 'string', default: '200' },
    queued: { type: 'string', default: '10000' },
    claims: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
  },
});
const tasks = Number(values.tasks);
const runMs = Number(values['run-ms']);
const deepQueue = Number(values.queued);
const claims = Number(values.claims);
const rounds = Number(values.rounds);
const backends = 4;
const slotsEach = 2;

const model = (modelId: string, pool: Array<{ name: string; ms: number; cap: number }>) => ({
  modelId,
  name: modelId,
  kind: 'image',
  backends: pool.map((b) => ({
    name: b.name,
    engine: b.ms === 0 ? 'noop' : 'fake',
    // One sleep of the run's length: the run takes its 200 ms, not ten timers' worth more.
    engineOptions: b.ms === 0 ? {} : { durationMs: b.ms, steps: 1 },
    maxConcurrent: b.cap,
  })),
  capabilities: {
    sizes: [{ width: 1, height: 1, aspectRatio: '1:1', maxCount: 1 }],
    formats: ['png'],
  },
  pricing: { unit: 'request', credits: 1, category: null },
});

const models = JSON.stringify([
  model(
    'mdl_fleet',
    Array.from({ length: backends }, (_, i) => ({
      name: `box-${i + 1}`,
      ms: runMs,
      cap: slotsEach,
    })),
  ),
  model('mdl_saturated', [{ name: 'only', ms: 0, cap: 1 }]),
  {
    ...model('mdl_free', []),
    backends: undefined,
    engine: 'noop',
  },
]);

async function withCore<T>(fn: (core: Core) => Promise<T>, concurrency: number): Promise<T> {
  const run = async (url: string | undefined) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-dispatch-'));
    const config = loadConfig({
      env: {
        ...(url === undefined ? {} : { DATABASE_URL: url }),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        // The deep queue is made by one INSERT of up to 10,000 tasks (and their event-log rows),
        // which takes longer than the default 1.5 s bound on a statement.
        DATABASE_TIMEOUT_MS: '60000',
        RATE_LIMIT_PER_WINDOW: '0',
        ACCOUNT_MAX_RUNNING_TASKS: '0',
        WORKER_CONCURRENCY: String(concurrency),
        TASK_POLL_MS: '1000',
        MODELS: models,
      },
      cwd: process.cwd(),
    });
    const core = await buildCore(config);
    try {
      return await fn(core);
    } finally {
      await core.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  };
  return benchPostgres === undefined ? run(undefined) : withScratchDatabase(benchPostgres, run);
}

async function actor(core: Core, credits: number): Promise<Actor> {
  const account = await core.services.accounts.create({
    alias: 'bench',
    credits: { standard: credits },
  });
  return {
    accountId: account.id,
    role: 'user',
    credential: { kind: 'api_key', apiKeyId: 'bench' },
  };
}

/** Seconds from the workers' start to the last of `tasks` finished. */
async function makespan(): Promise<number> {
  return withCore(async (core) => {
    const who = await actor(core, tasks);
    for (let i = 0; i < tasks; i++) {
      await core.services.generations.submit(who, 'image', { modelId: 'mdl_fleet', prompt: 'x' });
    }
    // More worker slots than the pool has: the caps pace the work.
    const started = performance.now();
    core.startWorkers(silentLogger, backends * slotsEach + 4);
    while ((await countTasks(core.database.db, 'finished')) < tasks) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return (performance.now() - started) / 1000;
  }, 0);
}

/**
 * Milliseconds per claim of `mdl_free`'s tasks with `queued` tasks waiting behind the full
 * pool of `mdl_saturated` (its one slot held by a running task).
 */
async function claimMs(queued: number): Promise<number> {
  return withCore(async (core) => {
    const db = core.database.db;
    const who = await actor(core, claims + 2);
    const submit = (modelId: string) =>
      core.services.generations.submit(who, 'image', { modelId, prompt: 'x' });
    await submit('mdl_saturated');
    // Its one slot taken: the pool is saturated from here on.
    if ((await claimTask(db, 'bench', 600_000))?.task.model_id !== 'mdl_saturated') {
      throw new Error('the saturated pool’s first task was not claimed first');
    }
    if (queued > 0) {
      await submit('mdl_saturated');
      // Copies of that queued task (new IDs), in one statement: the deep queue.
      await sql`
        WITH source AS (
          SELECT c, t FROM tasks t JOIN contents c ON c.id = t.content_id
          WHERE t.model_id = 'mdl_saturated' AND t.status = 'queued' LIMIT 1
        ), copies AS (
          SELECT g, c, t FROM source, generate_series(1, ${queued - 1}) g
        ), new_contents AS (
          INSERT INTO contents
          SELECT (jsonb_populate_record(c, jsonb_build_object(
            'id', 'cnt_deep' || g, 'idempotency_key', NULL))).* FROM copies
        )
        INSERT INTO tasks
        SELECT (jsonb_populate_record(t, jsonb_build_object(
          'id', 'tsk_deep' || g, 'content_id', 'cnt_deep' || g, 'fair_key', g))).* FROM copies`.execute(
        db,
      );
    }
    for (let i = 0; i < claims; i++) await submit('mdl_free');
    const started = performance.now();
    for (let i = 0; i < claims; i++) {
      const claimed = await claimTask(db, 'bench', 600_000);
      if (claimed?.task.model_id !== 'mdl_free') throw new Error('claimed the wrong task');
    }
    return (performance.now() - started) / claims;
  }, 0);
}

const seconds = await makespan();
const ideal = (tasks * runMs) / 1000 / (backends * slotsEach);
// Rounds alternate the two sides, each on a fresh database; each side reports its median.
const emptyRuns: number[] = [];
const deepRuns: number[] = [];
for (let round = 0; round < rounds; round++) {
  emptyRuns.push(await claimMs(0));
  deepRuns.push(await claimMs(deepQueue));
}
const median = (runs: number[]) =>
  [...runs].sort((a, b) => a - b)[Math.floor((runs.length - 1) / 2)]!;
const empty = median(emptyRuns);
const deep = median(deepRuns);
const where = benchPostgres === undefined ? 'embedded database' : 'PostgreSQL';
console.log(`\ndispatch on ${where}, node ${process.version}\n`);
console.log(
  `makespan: ${tasks} tasks × ${runMs} ms on ${backends} backends × ${slotsEach} slots: ${seconds.toFixed(2)} s, ideal ${ideal.toFixed(2)} s → ${(ideal / seconds).toFixed(2)}× ideal (target ≥ 0.9×)`,
);
console.log(
  `claim with ${deepQueue} tasks queued behind a full pool: ${deep.toFixed(2)} ms, with none: ${empty.toFixed(2)} ms → ${(deep / empty).toFixed(2)}×`,
);
report([
  {
    bench: 'dispatch',
    measure: `${tasks} tasks × ${runMs} ms on ${backends}×${slotsEach} slots, makespan`,
    atelier: seconds,
    baseline: ideal,
    baselineName: 'ideal',
    unit: 's',
    higherIsBetter: false,
  },
  {
    bench: 'dispatch',
    measure: `one claim, ${deepQueue} tasks queued behind a full pool`,
    atelier: deep,
    baseline: empty,
    baselineName: 'none queued',
    unit: 'ms',
    higherIsBetter: false,
  },
]);
