import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { atelier, startServer } from '../../helpers/cli.ts';
import { submitOk, waitForTask } from '../../helpers/generation.ts';

// Issue 30 §2: DATA_DIR was created 0755 and the embedded database wrote its files 0666, its
// write-ahead log (with the signing keys) included: another local user read the keys, forged
// download URLs and signed an ID token accepted as the admin. Now everything under DATA_DIR is
// its owner's only, and a directory opened up before is repaired at start.

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** Every entry under `root` (itself included) with its mode, directories marked with '/'. */
function modes(root: string): Map<string, number> {
  const found = new Map<string, number>();
  const pending = [root];
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    const stat = lstatSync(entry);
    const name = path.relative(root, entry) + (stat.isDirectory() ? '/' : '');
    found.set(name, stat.mode & 0o777);
    if (stat.isDirectory()) for (const n of readdirSync(entry)) pending.push(path.join(entry, n));
  }
  return found;
}

function openToOthers(root: string): string[] {
  return [...modes(root)]
    .filter(([, mode]) => (mode & 0o077) !== 0)
    .map(([name, mode]) => `${name} ${mode.toString(8)}`);
}

/** A parent others may pass through, as a home directory usually is. */
function openParent(): string {
  const parent = mkdtempSync(path.join(tmpdir(), 'atelier-modes-'));
  chmodSync(parent, 0o755);
  after(() => rmSync(parent, { recursive: true, force: true }));
  return parent;
}

/** What `nobody` gets trying to read `file`: its bytes, or the error it met. */
async function readAsNobody(file: string): Promise<string> {
  try {
    const { stdout } = await run('runuser', ['-u', 'nobody', '--', 'cat', file]);
    return `read ${stdout.length} characters`;
  } catch (error) {
    return String((error as { stderr?: string }).stderr);
  }
}

describe('DATA_DIR is its owner’s only (issue 30)', () => {
  it('a new data directory, its database and its media are owner-only; another user reads nothing', async () => {
    const dataDir = path.join(openParent(), 'data');
    const server = await startServer({ DATA_DIR: dataDir });
    try {
      const key = /svc_[A-Za-z0-9]{32}/.exec(server.stderr())?.[0];
      assert.ok(key, server.stderr());
      const submitted = await submitOk(server.url, key, {
        modelId: 'mdl_atelier-sketch',
        prompt: 'a private picture',
      });
      const task = await waitForTask(server.url, key, submitted.taskId);
      assert.equal(task.finishCode, FinishCode.Ok);
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
    }
    const entries = modes(dataDir);
    const media = [...entries.keys()].filter(
      (name) => name.startsWith('files/') && !name.endsWith('/'),
    );
    assert.ok(media.length > 0, 'the generated image is on disk');
    const wal = [...entries.keys()].find((name) => /^pglite\/pg_wal\/[0-9A-F]{24}$/.test(name));
    assert.ok(wal, [...entries.keys()].join('\n'));
    assert.deepEqual(openToOthers(dataDir), []);
    assert.equal(entries.get('/'), 0o700);
    assert.doesNotMatch(server.stderr(), /were open to other users/, 'nothing to repair');

    if (!asRoot) return; // runuser needs root; CI runs the suite as root
    for (const file of [wal, media[0]!]) {
      assert.match(await readAsNobody(path.join(dataDir, file)), /Permission denied/);
    }
  });

  it('a data directory opened up before is made owner-only at start, and the log says so once', async () => {
    const dataDir = path.join(openParent(), 'data');
    const first = await atelier(['migrate'], { DATA_DIR: dataDir });
    assert.equal(first.code, 0, first.stderr);
    // As an older Atelier (umask 022) or a careless `chmod -R` left it.
    const before = modes(dataDir);
    for (const [name, mode] of before) {
      chmodSync(path.join(dataDir, name), mode | (name.endsWith('/') ? 0o055 : 0o044));
    }
    assert.equal(openToOthers(dataDir).length, before.size);

    const repaired = await atelier(['migrate'], { DATA_DIR: dataDir });
    assert.equal(repaired.code, 0, repaired.stderr);
    const warnings = repaired.stderr.match(
      /WARNING: (\d+) entries under DATA_DIR .* were open to other users/g,
    );
    assert.equal(warnings?.length, 1, repaired.stderr);
    assert.match(warnings[0]!, new RegExp(`WARNING: ${before.size} entries`));
    assert.deepEqual(openToOthers(dataDir), []);

    const again = await atelier(['migrate'], { DATA_DIR: dataDir });
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /open to other users/, 'said once, not at every start');
  });
});
