import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { olderNode } from '../../helpers/older-node.ts';

// Issue 20: on a Node too old for Atelier, the first command a person types says what to
// install and how, instead of a stack trace (ERR_UNKNOWN_FILE_EXTENSION ".ts" before).

const root = new URL('../../../', import.meta.url).pathname;
const older = olderNode();

function assertSaysWhatToInstall(stderr: string, version: string) {
  assert.match(
    stderr,
    new RegExp(`Node\\.js 22\\.18 or later .*this is v${version.replaceAll('.', '\\.')}`),
  );
  assert.match(stderr, /nvm install && nvm use/, 'the nvm line');
  assert.match(stderr, /npm install --no-save --prefix ~\/\.cache\/node24 node@24/);
  assert.match(stderr, /export PATH=~\/\.cache\/node24\/node_modules\/\.bin:\$PATH/);
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(stderr, /ERR_/);
}

describe('on a Node older than 22.18', {
  skip: older === undefined && 'no older Node here',
}, () => {
  it('bin/atelier says what to install, and exits 1 having started nothing', () => {
    const run = spawnSync(older!.path, [path.join(root, 'bin/atelier'), 'serve'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, PORT: '1' },
      timeout: 30_000,
    });
    assert.equal(run.status, 1, run.stderr);
    assertSaysWhatToInstall(run.stderr, older!.version);
  });

  it('npm start (which runs node from PATH) says the same', () => {
    const bin = path.dirname(older!.path);
    const run = spawnSync('npm', ['start'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:/usr/bin:/bin`, PORT: '1' },
      timeout: 60_000,
    });
    assert.notEqual(run.status, 0);
    assertSaysWhatToInstall(run.stderr, older!.version);
  });
});

it('.nvmrc names the Node the project is tested on, within package.json engines', async () => {
  const { readFileSync } = await import('node:fs');
  const nvmrc = readFileSync(path.join(root, '.nvmrc'), 'utf8').trim();
  const { engines } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    engines: { node: string };
  };
  assert.equal(nvmrc, '24');
  assert.equal(engines.node, '>=22.18');
});
