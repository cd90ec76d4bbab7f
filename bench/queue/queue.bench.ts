// The task queue, end to end on PostgreSQL: Atelier's submissions (validated, charged,
// queued in one transaction) → claimed under a lease → a no-op engine → finished in a
// fenced transaction, against graphile-worker (`addJob` + a no-op task) on the same server,
// same concurrency, same run. Prints jobs/s for both and the ratio.
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/queue/queue.bench.ts [--jobs 2000] [--concurrency 4]
import { parseArgs } from 'node:util';
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import pg from 'pg';
import { loadConfig } from '../../src/config/config.ts';
import { buildCore } from '../../src/core.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { countTasks } from '../../src/store/task-queue.store.ts';
import { noopModels } from '../noop-model.ts';
import { report } from '../report.ts';
import { withScratchDatabase } from '../scratch-database.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '4' },
    submitters: { type: 'string', default: '8' },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const submitters = Number(values.submitters);
const server = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
if (!server) {
  console.error('Set BENCH_DATABASE_URL or TEST_DATABASE_URL to a PostgreSQL server.');
  process.exit(2);
}

/** Runs `count` calls of `fn` with `parallel` in flight. */
async function inParallel(
  count: number,
  parallel: number,
  fn: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Seconds until the last submission returned (the rest is the workers catching up). */
const submittedIn = { atelier: 0, graphile: 0 };

async function atelier(url: string): Promise<number> {
  const config = loadConfig({
    env: {
      DATABASE_URL: url,
      DATA_DIR: '.tmp/bench-queue',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_WINDOW: '0',
      // The per-account cap (default 4) as deployed, unless the caller sets it (0 turns it off).
      ACCOUNT_MAX_RUNNING_TASKS: process.env.ACCOUNT_MAX_RUNNING_TASKS ?? '4',
      WORKER_CONCURRENCY: String(concurrency),
      TASK_POLL_MS: '1000',
      MODELS: noopModels,
    },
    cwd: process.cwd(),
  });
  const core = await buildCore(config);
  try {
    // One account per submitter: submissions of one account serialize on its balance (by
    // design), which would measure that lock rather than the queue.
    const actors = await Promise.all(
      Array.from({ length: submitters }, async (_, i) => {
        const account = await core.services.accounts.create({
          alias: `bench-${i}`,
          credits: { standard: jobs },
        });
        return {
          accountId: account.id,
          role: 'user' as const,
          credential: { kind: 'api_key' as const, apiKeyId: 'bench' },
        };
      }),
    );
    core.startWorkers(silentLogger);
    const started = performance.now();
    await inParallel(jobs, submitters, (i) =>
      core.services.generations.submit(actors[i % submitters]!, 'image', {
        modelId: 'mdl_bench-noop',
        prompt: 'noop',
      }),
    );
    submittedIn.atelier = (performance.now() - started) / 1000;
    await waitUntil(async () => (await countTasks(core.database.db, 'finished')) === jobs);
    return jobs / ((performance.now() - started) / 1000);
  } finally {
    await core.close();
  }
}

async function graphileWorker(url: string): Promise<number> {
  let done = 0;
  const pgPool = new pg.Pool({ connectionString: url, max: concurrency + submitters + 2 });
  pgPool.on('error', () => {});
  const logger = new Logger(() => () => {});
  const runner = await run({
    pgPool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger,
    taskList: {
      noop: async () => {
        done++;
      },
    },
  });
  const utils = await makeWorkerUtils({ pgPool, logger });
  try {
    const started = performance.now();
    await inParallel(jobs, submitters, () => utils.addJob('noop', {}));
    submittedIn.graphile = (performance.now() - started) / 1000;
    await waitUntil(async () => done >= jobs);
    return jobs / ((performance.now() - started) / 1000);
  } finally {
    await utils.release();
    await runner.stop();
    await pgPool.end();
  }
}

const ours = await withScratchDatabase(server!, atelier);
const theirs = await withScratchDatabase(server!, graphileWorker);
console.log(
  `\n${jobs} jobs, ${concurrency} worker slots, ${submitters} concurrent submitters, node ${process.version}\n`,
);
console.log(
  'queue                                      end-to-end jobs/s   × graphile-worker   submissions/s',
);
const row = (name: string, rate: number, submitted: number) =>
  console.log(
    `${name.padEnd(42)} ${rate.toFixed(0).padStart(17)} ${(rate / theirs).toFixed(2).padStart(19)} ${(jobs / submitted).toFixed(0).padStart(15)}`,
  );
row('atelier (submit+charge → claim → finish)', ours, submittedIn.atelier);
row('graphile-worker (addJob → no-op task)', theirs, submittedIn.graphile);
report([
  {
    bench: 'queue',
    measure: 'submit → claim → finish, end to end',
    atelier: ours,
    baseline: theirs,
    baselineName: 'graphile-worker',
    unit: 'jobs/s',
    higherIsBetter: true,
  },
]);
