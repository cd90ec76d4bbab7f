// The task queue, end to end on PostgreSQL: Atelier's submissions (validated, charged,
// queued in one transaction) → claimed under a lease → a no-op engine → finished in a
// fenced transaction, against graphile-worker (`addJob` + a no-op task) on the same server,
// same concurrency, same run. Prints jobs/s for both and the ratio.
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/queue/queue.bench.ts \
//     [--jobs 2000] [--concurrency 4] [--submitters 8] [--rounds 3]
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
    rounds: { type: 'string', default: '3' },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const submitters = Number(values.submitters);
const rounds = Number(values.rounds);
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

/** One side's run: jobs/s end to end, and submissions/s until the last one returned. */
interface Run {
  readonly rate: number;
  readonly submitted: number;
}

async function atelier(url: string): Promise<Run> {
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
    const submitted = jobs / ((performance.now() - started) / 1000);
    await waitUntil(async () => (await countTasks(core.database.db, 'finished')) === jobs);
    return { rate: jobs / ((performance.now() - started) / 1000), submitted };
  } finally {
    await core.close();
  }
}

async function graphileWorker(url: string): Promise<Run> {
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
    const submitted = jobs / ((performance.now() - started) / 1000);
    await waitUntil(async () => done >= jobs);
    return { rate: jobs / ((performance.now() - started) / 1000), submitted };
  } finally {
    await utils.release();
    await runner.stop();
    await pgPool.end();
  }
}

/** The middle run by rate (the lower middle of an even count). */
function median(runs: readonly Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.rate - b.rate);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

// Rounds alternate the two sides, each on a fresh database, so a slower stretch of the machine
// (or of the server's caches) falls on both; each side reports its median round.
const ourRuns: Run[] = [];
const theirRuns: Run[] = [];
for (let round = 0; round < rounds; round++) {
  ourRuns.push(await withScratchDatabase(server!, atelier));
  theirRuns.push(await withScratchDatabase(server!, graphileWorker));
}
const ours = median(ourRuns);
const theirs = median(theirRuns);
console.log(
  `\n${jobs} jobs, ${concurrency} worker slots, ${submitters} concurrent submitters, ${rounds} rounds (medians), node ${process.version}\n`,
);
console.log(
  'queue                                      end-to-end jobs/s   × graphile-worker   submissions/s   rounds (jobs/s)',
);
const row = (name: string, run: Run, all: readonly Run[]) =>
  console.log(
    `${name.padEnd(42)} ${run.rate.toFixed(0).padStart(17)} ${(run.rate / theirs.rate).toFixed(2).padStart(19)} ${run.submitted.toFixed(0).padStart(15)}   ${all.map((r) => r.rate.toFixed(0)).join(' ')}`,
  );
row('atelier (submit+charge → claim → finish)', ours, ourRuns);
row('graphile-worker (addJob → no-op task)', theirs, theirRuns);
report([
  {
    bench: 'queue',
    measure: 'submit → claim → finish, end to end',
    atelier: ours.rate,
    baseline: theirs.rate,
    baselineName: 'graphile-worker',
    unit: 'jobs/s',
    higherIsBetter: true,
  },
]);
