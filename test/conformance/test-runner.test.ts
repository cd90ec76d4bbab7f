import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

// `npm test` (scripts/test.ts) runs again only the files whose process died of V8's known
// abort (nodejs/node#64500); every other failure stands.
const v8Abort = '# Check failed: jit_page_->allocations_.erase(addr) == 1.';
const fixture = 'test/conformance/fixtures/dies.ts';

function npmTest(env: Record<string, string>) {
  // Without the variable that marks a process as a test file's, which would make the inner
  // `node --test` skip its files.
  const { NODE_TEST_CONTEXT: _, ...outside } = process.env;
  const run = spawnSync(process.execPath, ['scripts/test.ts', fixture], {
    env: { ...outside, ...env },
    encoding: 'utf8',
  });
  return { code: run.status, output: run.stdout + run.stderr };
}

test('a file killed once by the V8 abort is run again and its second result counts', () => {
  const marker = path.join(mkdtempSync(path.join(tmpdir(), 'dies-')), 'died');
  const run = npmTest({ DIES_MESSAGE: v8Abort, DIES_ONCE_MARKER: marker });
  assert.match(run.output, /Running once more: test\/conformance\/fixtures\/dies\.ts/);
  assert.match(run.output, /passes when run again/);
  assert.equal(run.code, 0);
});

test('a file the V8 abort kills every time fails the run', () => {
  const run = npmTest({ DIES_MESSAGE: v8Abort });
  assert.match(run.output, /Running once more/);
  assert.notEqual(run.code, 0);
});

test('any other death fails the run without a second one', () => {
  const marker = path.join(mkdtempSync(path.join(tmpdir(), 'dies-')), 'died');
  const run = npmTest({ DIES_MESSAGE: 'Segmentation fault', DIES_ONCE_MARKER: marker });
  assert.doesNotMatch(run.output, /Running once more/);
  assert.notEqual(run.code, 0);
});
