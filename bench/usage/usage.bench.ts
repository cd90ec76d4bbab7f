// The usage report (issue 32) on a year of data: a month grouped by day × model, over
// 1,000,000 tasks on PostgreSQL, against the issue's floor of 200 ms.
//
// On a scratch database of the PostgreSQL server in BENCH_DATABASE_URL or TEST_DATABASE_URL,
// migrated as Atelier migrates, it generates the year in SQL (generate_series: contents and
// their tasks, one every 31.5 s through 2025, 50 accounts, 24 models of the 4 kinds, a twentieth
// failed and refunded, a quarter run on a pool with one or two recorded runs each), vacuums it as
// autovacuum would, then times the report of June 2025 by day × model through the store
// function (`usageReport`) and through GraphQL (`usageReport` as an admin, in-process HTTP),
// and the admin console's queue chart (`queueHistory`: one day at 49 points), medians of
// several runs.
//
//   node bench/usage/usage.bench.ts [--tasks 1000000] [--runs 9]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openDatabase } from '../../src/store/database.ts';
import { queueHistory } from '../../src/store/queue-history.store.ts';
import { usageReport } from '../../src/store/usage.store.ts';
import { type BenchRow, report } from '../report.ts';
import { benchPostgres, withScratchDatabase } from '../scratch-database.ts';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '9' },
  },
});
const tasks = Number(values.tasks);
const runs = Number(values.runs);
const floorMs = 200;
const month = { from: new Date('2025-06-01T00:00:00Z'), to: new Date('2025-07-01T00:00:00Z') };

if (benchPostgres === undefined) {
  console.error(
    'The usage benchmark needs PostgreSQL: set BENCH_DATABASE_URL or TEST_DATABASE_URL.',
  );
  process.exit(1);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await withScratchDatabase(benchPostgres, async (url) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-usage-'));
  const config = loadConfig({
    env: { DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0' },
    cwd: process.cwd(),
  });
  const app = await buildApp(config);
  try {
    const { db } = app.database;
    const started = performance.now();
    // Outside the app's pool: its statement timeout is for requests, not for a year of rows.
    const loader = await openDatabase({ backend: 'postgres', url, statementTimeoutMs: 0 });
    try {
      await generateYear(loader.db, tasks);
    } finally {
      await loader.close();
    }
    const generatedS = (performance.now() - started) / 1000;
    console.log(`generated ${tasks} tasks over 2025 in ${generatedS.toFixed(1)} s`);

    const query = { ...month, groupBy: ['day', 'model'] as const, filter: {} };
    const storeMs: number[] = [];
    let rows = 0;
    for (let i = 0; i < runs + 1; i++) {
      const t0 = performance.now();
      rows = (await usageReport(db, query, 10_001)).length;
      if (i > 0) storeMs.push(performance.now() - t0); // the first warms the cache
    }

    // The admin console's queue chart: a day of the year's queue at 49 points (every half hour).
    const day = new Date('2025-06-15T00:00:00Z');
    const historyMs: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const t0 = performance.now();
      const points = await queueHistory(db, day, 1_800_000, 49, null);
      if (points.length !== 49 || points[24]!.submitted === 0) throw new Error('no history');
      if (i > 0) historyMs.push(performance.now() - t0);
    }

    const admin = await app.services.accounts.create({
      alias: 'bench-admin',
      role: 'admin',
      apiKeyAccess: true,
    });
    const key = await app.services.apiKeys.issue(admin.id, { name: 'bench' });
    const body = JSON.stringify({
      query: `query U($from: DateTime!, $to: DateTime!) {
        usageReport(from: $from, to: $to, groupBy: [DAY, MODEL]) {
          day modelId submissions finishes { code count } creditsCharged creditsRefunded
          runSeconds providerCalls providerFailures
        }
      }`,
      variables: { from: month.from.toISOString(), to: month.to.toISOString() },
    });
    const graphqlMs: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const t0 = performance.now();
      const res = await app.http.inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key.secret}` },
        payload: body,
      });
      const answer = res.json() as { data?: { usageReport?: unknown[] }; errors?: unknown };
      if (answer.data?.usageReport?.length !== rows) throw new Error(res.body.slice(0, 500));
      if (i > 0) graphqlMs.push(performance.now() - t0);
    }

    const size = tasks.toLocaleString('en-US');
    const results: BenchRow[] = [
      {
        bench: 'usage',
        measure: `a month by day × model, ${size} tasks, store [postgres]`,
        atelier: median(storeMs),
        baseline: floorMs,
        baselineName: 'floor: issue 32 target',
        unit: 'ms',
        higherIsBetter: false,
      },
      {
        bench: 'usage',
        measure: `the queue over a day at 49 points, ${size} tasks, store [postgres]`,
        atelier: median(historyMs),
        baseline: floorMs,
        baselineName: 'floor: issue 32 target',
        unit: 'ms',
        higherIsBetter: false,
      },
      {
        bench: 'usage',
        measure: `a month by day × model, ${size} tasks, GraphQL [postgres]`,
        atelier: median(graphqlMs),
        baseline: floorMs,
        baselineName: 'floor: issue 32 target',
        unit: 'ms',
        higherIsBetter: false,
      },
    ];
    console.log(`\nJune 2025 of ${size} tasks: ${rows} rows, medians of ${runs} runs\n`);
    console.table(
      results.map((r) => ({
        measure: r.measure,
        'ms (median)': r.atelier.toFixed(1),
        '× floor (200 ms)': (r.atelier / r.baseline).toFixed(2),
      })),
    );
    console.log(`store runs (ms): ${storeMs.map((ms) => ms.toFixed(0)).join(' ')}`);
    console.log(`queue history runs (ms): ${historyMs.map((ms) => ms.toFixed(0)).join(' ')}`);
    console.log(`GraphQL runs (ms): ${graphqlMs.map((ms) => ms.toFixed(0)).join(' ')}`);
    report(results);
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * A year of submissions in a few statements. Task triggers (the event log, webhooks) are off
 * while the tasks go in: they would write a million event rows the report never reads.
 */
async function generateYear(db: Parameters<typeof usageReport>[0], n: number): Promise<void> {
  const step = sql.lit(`${(365 * 86_400) / n} seconds`);
  const kinds = sql`(ARRAY['image','image','image','video','speech','avatar'])[1 + i % 6]`;
  const at = sql`timestamptz '2025-01-01' + i * interval ${step}`;
  await sql`
    INSERT INTO accounts (id, alias, status, role, api_key_access)
    SELECT 'acc_' || a, 'bench-' || a, 'active', 'user', true FROM generate_series(1, 50) a`.execute(
    db,
  );
  await sql`
    INSERT INTO contents (id, account_id, kind, model_id, input, input_hash, credits_charged,
      credits_refunded, created_at, spender)
    SELECT 'cnt_' || i, 'acc_' || (1 + i % 50), ${kinds}, 'mdl_' || ${kinds} || '-' || (i % 4),
      '{}', 'h', 1 + i % 5, CASE WHEN i % 20 = 0 THEN 1 + i % 5 ELSE 0 END, ${at},
      CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN 'key_' || (i % 50) ELSE 'mcp:client-' || (i % 7) END
    FROM generate_series(1, ${n}::int) i`.execute(db);
  await sql`ALTER TABLE tasks DISABLE TRIGGER USER`.execute(db);
  await sql`
    INSERT INTO tasks (id, content_id, account_id, status, finish_code, progress, attempts,
      max_attempts, created_at, started_at, finished_at, model_id, backend_id)
    SELECT 'tsk_' || i, 'cnt_' || i, 'acc_' || (1 + i % 50), 'finished',
      CASE WHEN i % 20 = 0 THEN 1 + i / 20 % 5 ELSE 0 END, 1, 1, 3, ${at},
      ${at} + interval '1 second', ${at} + (1 + i % 30) * interval '1 second',
      'mdl_' || ${kinds} || '-' || (i % 4), CASE WHEN i % 4 = 0 THEN 'bck_' || (i % 3) END
    FROM generate_series(1, ${n}::int) i`.execute(db);
  await sql`ALTER TABLE tasks ENABLE TRIGGER USER`.execute(db);
  await sql`
    INSERT INTO task_attempts (task_id, attempt, backend_id, started_at, ended_at, outcome)
    SELECT 'tsk_' || i, k, 'bck_' || (i % 3), ${at} + interval '1 second',
      ${at} + interval '2 seconds', CASE WHEN k = 1 AND i % 8 = 0 THEN 'failed_over' ELSE 'ok' END
    FROM generate_series(4, ${n}::int, 4) i,
      generate_series(1, CASE WHEN i % 8 = 0 THEN 2 ELSE 1 END) k`.execute(db);
  for (const table of ['contents', 'tasks', 'task_attempts']) {
    await sql`VACUUM ANALYZE ${sql.table(table)}`.execute(db);
  }
}
