// What counting rate limits costs, two ways:
// 1. Through HTTP: Atelier's authenticated getUserByPrivateId on PostgreSQL with limits off
//    (the baseline) and counted in memory, in PostgreSQL and in Redis, under the same load
//    (autocannon). The limit is far above the load: every request is counted, none refused.
// 2. The count alone: hits per second of the shared windows (20 callers at once) against the
//    floor of their store — a bare `SELECT 1` for PostgreSQL, a bare `INCR` for Redis.
//
//   node bench/rate-limits/rate-limits.bench.ts [--duration 10] [--connections 20] [--hits 20000]
//
// Needs PostgreSQL (BENCH_DATABASE_URL or TEST_DATABASE_URL); Redis from BENCH_REDIS_URL or
// TEST_REDIS_URL (its rows are skipped without).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { DatabaseRateLimitWindows } from '../../src/rate-limits/rate-limit-windows.ts';
import { RedisRateLimitWindows } from '../../src/rate-limits/redis-rate-limit-windows.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { openDatabase } from '../../src/store/database.ts';
import { migrateToLatest } from '../../src/store/migrator.ts';
import { type BenchRow, report } from '../report.ts';
import { benchPostgres, withScratchDatabase } from '../scratch-database.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    hits: { type: 'string', default: '20000' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const hits = Number(values.hits);
const redisUrl = process.env.BENCH_REDIS_URL || process.env.TEST_REDIS_URL;
if (!benchPostgres) {
  console.error('bench/rate-limits needs PostgreSQL: set BENCH_DATABASE_URL or TEST_DATABASE_URL');
  process.exit(2);
}
const postgres = benchPostgres;
const rows: BenchRow[] = [];

// ── 1. Through HTTP ──────────────────────────────────────────────────────────────────────

const me = '{ getUserByPrivateId { id alias creditBalances { category amount } } }';
const server = new URL('../graphql/servers/atelier.ts', import.meta.url).pathname;

/** Req/s of one configuration of Atelier, on a database of its own. */
function serve(env: Record<string, string>): Promise<{ rps: number; errors: number }> {
  return withScratchDatabase(postgres, async (url) => {
    const child: ChildProcess = spawn(process.execPath, [server], {
      env: { ...process.env, DATABASE_URL: url, WORKER_CONCURRENCY: '0', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [line] = (await Promise.race([
        once(createInterface({ input: child.stdout! }), 'line'),
        once(child, 'exit').then(([code]) => {
          throw new Error(`the Atelier server exited (${code}) before it listened`);
        }),
      ])) as [string];
      const started = JSON.parse(line) as { url: string; apiKey: string };
      const options = {
        url: `${started.url}/graphql`,
        method: 'POST' as const,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${started.apiKey}`,
        },
        body: JSON.stringify({ query: me }),
        connections,
      };
      // Warm-up: 2 s, or half a short run.
      await autocannon({ ...options, duration: Math.min(2, duration / 2) });
      const result = await autocannon({ ...options, duration });
      return { rps: result.requests.average, errors: result.errors + result.non2xx };
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      child.kill('SIGKILL');
    }
  });
}

const counted = { RATE_LIMIT_PER_WINDOW: '1000000', RATE_LIMIT_WINDOW_SECONDS: '60' };
const stores: Array<[string, Record<string, string>]> = [
  ['memory', { ...counted, RATE_LIMIT_STORE: 'memory' }],
  ['database', { ...counted, RATE_LIMIT_STORE: 'database' }],
];
if (redisUrl) {
  const prefix = `atelier-bench-${process.pid}:`;
  stores.push(['redis', { ...counted, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix }]);
}
const off = await serve({ RATE_LIMIT_PER_WINDOW: '0' });
const served = [{ store: 'off', ...off }];
for (const [store, env] of stores) served.push({ store, ...(await serve(env)) });

console.log(
  `\n${duration} s per store, ${connections} connections, PostgreSQL, ${process.version}\n`,
);
console.log('rate limits counted in   req/s  errors  ×off');
for (const r of served) {
  const cells = [r.store.padEnd(22), r.rps.toFixed(0).padStart(7), String(r.errors).padStart(7)];
  console.log([...cells, (r.rps / off.rps).toFixed(2).padStart(5)].join(' '));
}
for (const r of served.slice(1)) {
  rows.push({
    bench: 'rate-limits',
    measure: `getUserByPrivateId, counted in ${r.store} [postgres]`,
    atelier: r.rps,
    baseline: off.rps,
    baselineName: 'limits off',
    unit: 'req/s',
    higherIsBetter: true,
  });
}

// ── 2. The count alone ───────────────────────────────────────────────────────────────────

/** Calls per second of `call`, by 20 callers at once, `hits` calls in all (best of 3). */
async function rate(call: (caller: number) => Promise<unknown>): Promise<number> {
  let best = 0;
  for (let round = 0; round < 3; round++) {
    let done = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 20 }, async (_, caller) => {
        while (done < hits) {
          done++;
          await call(caller);
        }
      }),
    );
    best = Math.max(best, hits / ((performance.now() - start) / 1000));
  }
  return best;
}

const alone: Array<{ what: string; atelier: number; floor: number; floorName: string }> = [];
await withScratchDatabase(postgres, async (url) => {
  const database = await openDatabase({ backend: 'postgres', url });
  try {
    await migrateToLatest(database.db);
    const windows = new DatabaseRateLimitWindows(database.db, systemClock);
    alone.push({
      what: 'database',
      atelier: await rate((caller) => windows.hit(`bench:${caller}`, 60_000, 1)),
      floor: await rate(() => sql`SELECT 1`.execute(database.db)),
      floorName: 'SELECT 1',
    });
  } finally {
    await database.close();
  }
});
if (redisUrl) {
  const keyPrefix = `atelier-bench-${process.pid}:`;
  const windows = await RedisRateLimitWindows.connect({ url: redisUrl, keyPrefix }, silentLogger);
  const bare = new Redis(redisUrl, { keyPrefix });
  try {
    alone.push({
      what: 'redis',
      atelier: await rate((caller) => windows.hit(`bench:${caller}`, 60_000, 1)),
      floor: await rate((caller) => bare.incr(`bare:${caller}`)),
      floorName: 'INCR',
    });
    const keys = await bare.keys(`${keyPrefix}*`);
    if (keys.length > 0) await bare.unlink(...keys.map((key) => key.slice(keyPrefix.length)));
  } finally {
    windows.close();
    bare.disconnect();
  }
}

console.log(`\n${hits} hits by 20 callers at once, best of 3\n`);
console.log('window hit in         hits/s   floor  hits/s  ×floor');
for (const a of alone) {
  console.log(
    [
      a.what.padEnd(16),
      a.atelier.toFixed(0).padStart(8),
      a.floorName.padStart(10),
      a.floor.toFixed(0).padStart(7),
      (a.atelier / a.floor).toFixed(2).padStart(7),
    ].join(' '),
  );
  rows.push({
    bench: 'rate-limits',
    measure: `one window hit in ${a.what}, 20 at once`,
    atelier: a.atelier,
    baseline: a.floor,
    baselineName: a.floorName,
    unit: 'hits/s',
    higherIsBetter: true,
  });
}
if (!redisUrl) console.log('redis: skipped (set BENCH_REDIS_URL or TEST_REDIS_URL)');
if (served.some((r) => r.errors > 0)) process.exitCode = 1;
report(rows);
