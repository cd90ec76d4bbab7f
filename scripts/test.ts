// `npm test`: the full tier, with one rule on top of `node --test` (and the V8 flags and compile
// cache below). Node 24 sometimes aborts a test process with a V8 check failure while PGlite's
// WebAssembly instances are created and freed in it (nodejs/node#64500): the process dies, no
// assertion failed. When that happened, the files that failed run once more, one at a time, and
// their second result is the answer — a real failure fails again. (The test reporter does not say
// which file a process's output came from, so a file that failed otherwise in that same run gets
// the second run too.) Extra arguments go to `node --test` (e.g. a file to run alone).
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

/**
 * What each test file's process runs with, as `bin/atelier` does. V8 flags given to `node
 * --test` reach every test file's process: WebAssembly stays on V8's baseline compiler, so
 * the many PGlite databases of a run are not recompiled by the optimising compiler in the
 * background (src/shared/wasm-tiering.ts). Node's compile cache, in the directory the tests'
 * `bin/atelier` children use, lets only the first of the run's files type-strip and compile the
 * source tree. Together, measured on five integration files: 33 → 24 s of CPU, peak RSS 800
 * → 300 MB. NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE in the environment still rule.
 */
const v8Flags = ['--no-wasm-tier-up', '--no-wasm-dynamic-tiering'];
const env: NodeJS.ProcessEnv = {
  NODE_COMPILE_CACHE: path.join(tmpdir(), 'node-compile-cache'),
  // Piped, the reporter would drop its colours; a terminal keeps them.
  ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}),
  ...process.env,
};

const v8Abort = 'Check failed: jit_page_->allocations_.erase(addr) == 1';
const extra = process.argv.slice(2);
const files = extra.some((a) => a.endsWith('.ts')) ? [] : ['test/**/*.test.ts'];

const first = await run(['--test-concurrency=2', ...extra, ...files]);
const failed = [
  ...new Set(stripVTControlCharacters(first.output).match(/^test at [^:\n]+/gm) ?? []),
].map((line) => line.slice('test at '.length));
if (first.code !== 0 && first.output.includes(v8Abort) && failed.length > 0) {
  process.stdout.write(`\nA test process died of V8's known abort (${v8Abort}).\n`);
  process.stdout.write(`Running once more: ${failed.join(' ')}\n\n`);
  const options = extra.filter((a) => !a.endsWith('.ts')); // e.g. --test-name-pattern
  process.exitCode = (await run(['--test-concurrency=1', ...options, ...failed])).code;
} else {
  process.exitCode = first.code;
}

/** Runs `node --test` with `args`, passing its output through and keeping a copy to read. */
function run(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--test', '--test-timeout=180000', ...v8Flags, ...args],
      {
        stdio: ['inherit', 'pipe', 'pipe'],
        env,
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}
