import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { fileTypeFromBuffer } from 'file-type';
import type { Database } from '../../src/store/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { testPicture } from '../helpers/media.ts';
import { seedAccount } from '../helpers/seed.ts';

// The examples of docs/getting-started.md (examples/), run as a person runs them, against a real server with the
// built-in engines: each prices, submits with an idempotency key, follows the task and downloads.

const run = promisify(execFile);
const examples = new URL('../../examples/', import.meta.url).pathname;
const hasJq = await run('sh', ['-c', 'command -v jq && command -v curl']).then(
  () => true,
  () => false,
);

describe('examples/', () => {
  let database: Database;
  let t: TestApp;
  let apiKey: string;
  const dirs: string[] = [];
  before(async () => {
    database = await createTestDatabase('pglite');
    t = await startTestApp(database);
    ({ apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } }));
  });
  after(async () => {
    await t?.close();
    await database?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `command` in a new directory; resolves with its output and the files it wrote. */
  async function inNewDir(command: string, args: string[]) {
    const cwd = mkdtempSync(path.join(tmpdir(), 'atelier-example-'));
    dirs.push(cwd);
    const before = new Set(readdirSync(cwd));
    const { stdout } = await run(command, args, {
      cwd,
      env: { ...process.env, ATELIER_URL: t.url, ATELIER_API_KEY: apiKey },
      timeout: 120_000,
    });
    const written = readdirSync(cwd).filter((f) => !before.has(f));
    return { stdout, cwd, written };
  }

  async function typeOf(file: string) {
    return (await fileTypeFromBuffer(readFileSync(file)))?.mime;
  }

  for (const [script, args, mime] of [
    ['image.mjs', ['a lighthouse at dawn'], 'image/png'],
    ['video.mjs', ['waves at night'], 'video/mp4'],
    ['speech.mjs', [], 'audio/mpeg'],
  ] as const) {
    it(`${script}: priced, submitted, followed live, downloaded as ${mime}`, async () => {
      const { stdout, cwd, written } = await inNewDir(process.execPath, [
        path.join(examples, script),
        ...args,
      ]);
      assert.match(stdout, /^costs \d+ credits \(affordable: true\)$/m);
      assert.match(stdout, /^submitted: content cnt_\w+, task tsk_\w+$/m);
      assert.match(stdout, /^finished 100%$/m, 'the last live update');
      assert.equal(written.length, 1, stdout);
      assert.equal(await typeOf(path.join(cwd, written[0]!)), mime);
    });
  }

  it('speech.mjs reads a long text from a file and sends it as a variable', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-example-text-'));
    dirs.push(dir);
    const text = path.join(dir, 'notes.txt');
    // Quotes, braces and newlines that would break a query they were spliced into.
    writeFileSync(text, `${'He said "hello" {twice}.\n'.repeat(40)}`);
    const { stdout, cwd, written } = await inNewDir(process.execPath, [
      path.join(examples, 'speech.mjs'),
      text,
    ]);
    assert.match(stdout, /^costs 10 credits/m, '1,000 characters at 1 credit per 100');
    assert.equal(await typeOf(path.join(cwd, written[0]!)), 'audio/mpeg');
  });

  it('avatar.mjs uploads a portrait, makes an avatar and downloads its video', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-example-portrait-'));
    dirs.push(dir);
    const portrait = path.join(dir, 'portrait.png');
    writeFileSync(portrait, await testPicture(400, 400));
    const { stdout, cwd, written } = await inNewDir(process.execPath, [
      path.join(examples, 'avatar.mjs'),
      portrait,
      'Welcome to the studio.',
    ]);
    assert.match(stdout, /^avatar ava_\w+$/m);
    assert.equal(await typeOf(path.join(cwd, written[0]!)), 'video/mp4');
  });

  it('curl.sh: the same with curl and jq, polling', {
    skip: !hasJq && 'curl.sh needs curl and jq (apt-get install -y jq)',
  }, async () => {
    const { stdout, cwd, written } = await inNewDir(path.join(examples, 'curl.sh'), [
      'a lighthouse at dawn',
    ]);
    assert.match(stdout, /^costs \d+ credits \(affordable: true\)$/m);
    assert.match(stdout, /^finished$/m);
    assert.equal(await typeOf(path.join(cwd, written[0]!)), 'image/png');
  });

  it('a bad key is refused with the API error, and nothing is written', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'atelier-example-'));
    dirs.push(cwd);
    const failed = await run(process.execPath, [path.join(examples, 'image.mjs')], {
      cwd,
      env: { ...process.env, ATELIER_URL: t.url, ATELIER_API_KEY: 'svc_notakey' },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    assert.ok(failed, 'the script failed');
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /100101/);
    assert.deepEqual(readdirSync(cwd), []);
  });
});
