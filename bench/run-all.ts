// Every benchmark, one after another (each in its own process, so none disturbs another), then
// one table of Atelier against the baselines each measured in the same run.
//
//   npm run bench                      all of them, full length (several minutes)
//   npm run bench -- --quick           shorter runs, to see that everything works
//   npm run bench -- graphql engines   some of them
//
// The table is printed and written to bench/results/latest.md (docs/performance.md shows it). With a
// PostgreSQL server in BENCH_DATABASE_URL or TEST_DATABASE_URL, the benchmarks that can also
// measure Atelier on it, and the queue's baseline (graphile-worker) needs one.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { BenchRow } from './report.ts';

interface Benchmark {
  readonly script: string;
  /** Arguments of a quick run. */
  readonly quick: readonly string[];
  /** Why it cannot run here, or null. */
  readonly unavailable?: () => string | null;
}

const postgres = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;

export const benchmarks: Readonly<Record<string, Benchmark>> = {
  graphql: { script: 'graphql/graphql.bench.ts', quick: ['--duration', '1', '--no-yoga'] },
  queue: {
    script: 'queue/queue.bench.ts',
    quick: ['--jobs', '200', '--rounds', '1'],
    unavailable: () => (postgres ? null : 'graphile-worker needs PostgreSQL (TEST_DATABASE_URL)'),
  },
  ws: { script: 'ws/ws.bench.ts', quick: ['--connections', '100'] },
  dispatch: {
    script: 'dispatch/dispatch.bench.ts',
    quick: ['--tasks', '40', '--queued', '1000', '--claims', '50', '--rounds', '1'],
  },
  engines: { script: 'engines/engines.bench.ts', quick: ['--runs', '1'] },
  mcp: { script: 'mcp/mcp.bench.ts', quick: ['--duration', '1'] },
  start: { script: 'start/start.bench.ts', quick: ['--runs', '1'] },
  memory: {
    script: 'memory/memory.bench.ts',
    quick: ['--generations', '25', '--settle', '5'],
  },
  submit: { script: 'submit/submit.bench.ts', quick: ['--requests', '20', '--warmup', '5'] },
  'rate-limits': {
    script: 'rate-limits/rate-limits.bench.ts',
    quick: ['--duration', '1', '--hits', '2000'],
    unavailable: () => (postgres ? null : 'the shared counts need PostgreSQL (TEST_DATABASE_URL)'),
  },
  usage: {
    script: 'usage/usage.bench.ts',
    quick: ['--tasks', '100000', '--runs', '3'],
    unavailable: () =>
      postgres ? null : 'the report is measured on PostgreSQL (TEST_DATABASE_URL)',
  },
};

/** The ratio as a reader wants it: above 1 when Atelier does better than the baseline. */
function standing(row: BenchRow): string {
  const ratio = row.atelier / row.baseline;
  return `${ratio.toFixed(2)}× ${row.higherIsBetter ? '(higher is better)' : '(lower is better)'}`;
}

const figure = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

export function markdownTable(rows: readonly BenchRow[]): string {
  const lines = [
    '| benchmark | measure | Atelier | baseline | ratio Atelier / baseline |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.bench} | ${r.measure} | ${figure(r.atelier)} ${r.unit} | ${figure(r.baseline)} ${r.unit} (${r.baselineName}) | ${standing(r)} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } },
    allowPositionals: true,
  });
  const unknown = positionals.filter((name) => !(name in benchmarks));
  if (unknown.length > 0) {
    console.error(
      `Unknown benchmark ${unknown.join(', ')}; there are: ${Object.keys(benchmarks).join(', ')}.`,
    );
    return 2;
  }
  const chosen = positionals.length > 0 ? positionals : Object.keys(benchmarks);
  const work = mkdtempSync(path.join(tmpdir(), 'atelier-bench-'));
  const resultsFile = path.join(work, 'results.jsonl');
  writeFileSync(resultsFile, '');
  const skipped: string[] = [];
  let failed = 0;
  try {
    for (const name of chosen) {
      const bench = benchmarks[name]!;
      const why = bench.unavailable?.() ?? null;
      if (why !== null) {
        skipped.push(`${name}: ${why}`);
        continue;
      }
      console.log(`\n── ${name} ${'─'.repeat(60 - name.length)}`);
      const started = performance.now();
      const child = spawn(
        process.execPath,
        [new URL(bench.script, import.meta.url).pathname, ...(values.quick ? bench.quick : [])],
        { stdio: 'inherit', env: { ...process.env, BENCH_RESULTS: resultsFile } },
      );
      const [code] = (await once(child, 'exit')) as [number | null];
      console.log(`── ${name}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
      if (code !== 0) {
        failed++;
        console.error(`${name} exited with ${code}`);
      }
    }
    const rows = readFileSync(resultsFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as BenchRow);
    const header = `${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${cpus().length} cores${values.quick ? ', quick run' : ''}${postgres ? ', PostgreSQL available' : ''}`;
    console.log(`\n${header}\n`);
    console.table(
      rows.map((r) => ({
        benchmark: r.bench,
        measure: r.measure,
        atelier: `${figure(r.atelier)} ${r.unit}`,
        baseline: `${figure(r.baseline)} ${r.unit} (${r.baselineName})`,
        ratio: standing(r),
      })),
    );
    for (const line of skipped) console.log(`skipped ${line}`);
    const out = values.out ?? new URL('results/latest.md', import.meta.url).pathname;
    writeFileSync(
      out,
      `${header}\n\n${markdownTable(rows)}${skipped.map((line) => `\nSkipped ${line}.`).join('')}\n`,
    );
    console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return failed > 0 ? 1 : 0;
}

if (import.meta.main) process.exitCode = await main();
