import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { olderNode } from '../../helpers/older-node.ts';

const postinstall = new URL('../../../scripts/postinstall.mjs', import.meta.url).pathname;

describe('npm postinstall', () => {
  const older = olderNode()?.path;
  it('on a Node too old for Atelier, says what to install and lets npm install finish', {
    skip: older === undefined && 'no Node older than 22.18 on this machine',
  }, () => {
    const cache = mkdtempSync(path.join(tmpdir(), 'atelier-postinstall-'));
    try {
      const run = spawnSync(older!, [postinstall], {
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: cache },
      });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stderr, /Node\.js 22\.18 or later/);
      assert.match(run.stderr, /node@24/);
      assert.deepEqual(readdirSync(cache), [], 'nothing made');
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('on this Node, makes the embedded database template', () => {
    const cache = mkdtempSync(path.join(tmpdir(), 'atelier-postinstall-'));
    try {
      const run = spawnSync(process.execPath, [postinstall], {
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: cache },
      });
      assert.equal(run.status, 0, run.stderr);
      assert.doesNotMatch(run.stderr, /22\.18 or later/);
      const made = readdirSync(path.join(cache, 'atelier'));
      assert.ok(
        made.some((name) => name.startsWith('pglite-')),
        made.join(', '),
      );
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
