import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const runner = new URL('../../bench/run-all.ts', import.meta.url).pathname;

// `npm run bench` itself: a real (quick) engines benchmark goes through the runner, and the
// table it writes has a row per measure with finite figures and a ratio.
describe('npm run bench', () => {
  it('runs a benchmark and tabulates it against its baseline', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-bench-test-'));
    try {
      const out = path.join(dir, 'latest.md');
      await run(process.execPath, [runner, '--quick', 'engines', '--out', out], {
        timeout: 120_000,
      });
      const rows = readFileSync(out, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('| engines |'));
      assert.ok(rows.length >= 3, `${rows.length} rows`);
      for (const row of rows) {
        const [, , , atelier, baseline, ratio] = row.split('|').map((cell) => cell.trim());
        assert.match(atelier!, /^\d+(\.\d)? ms$/);
        assert.match(baseline!, /^\d+(\.\d)? ms \(.+\)$/);
        assert.match(ratio!, /^\d+\.\d\d× \(lower is better\)$/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the benchmarks there are when asked for one that is not', async () => {
    await assert.rejects(
      run(process.execPath, [runner, 'nope']),
      (error: { code: number; stderr: string }) => {
        assert.equal(error.code, 2);
        assert.match(
          error.stderr,
          /Unknown benchmark nope; there are: graphql, queue, ws, dispatch, engines, mcp, start, memory, submit, rate-limits, usage/,
        );
        return true;
      },
    );
  });
});
