import { appendFileSync } from 'node:fs';

/** One measure of a benchmark against the baseline measured in the same run. */
export interface BenchRow {
  readonly bench: string;
  readonly measure: string;
  readonly atelier: number;
  readonly baseline: number;
  readonly baselineName: string;
  readonly unit: string;
  /** Requests per second: higher; milliseconds and memory: lower. */
  readonly higherIsBetter: boolean;
}

/**
 * Hands a benchmark's figures to `bench/run-all.ts` (`npm run bench`), which names a file in
 * `BENCH_RESULTS`: one JSON line per row. Run alone, a benchmark only prints its own table.
 */
export function report(rows: readonly BenchRow[]): void {
  const file = process.env.BENCH_RESULTS;
  if (file === undefined || file === '') return;
  appendFileSync(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}
