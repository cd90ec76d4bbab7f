import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer } from '../../helpers/cli.ts';
import { migratedDataDir } from '../../helpers/data-dir.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { gqlOk } from '../../helpers/media.ts';
import { content } from '../../helpers/remote-engines.ts';

// docs/backups.md, followed with real processes: an account with credits and a generation,
// then the page's backup (the embedded database: stop, `cp -a`, start on the copy;
// PostgreSQL: `pg_dump` while serving, the media directory after it, `pg_restore` into a new
// database). The restored Atelier knows the account's key and balance, serves the result, and
// still honours a download URL signed before the backup: the signing key is in the database.

const run = promisify(execFile);
const withoutPgDump = await run('pg_dump', ['--version']).then(
  () => false,
  () => 'pg_dump is not installed',
);

/** What a backup must keep: a key, its balance after one generation, and the result's bytes. */
interface Kept {
  apiKey: string;
  mediaId: string;
  bytes: Buffer;
  signedUrl: string;
}

/** An account (operator commands with `env`), one image generated on `server`, downloaded. */
async function accountWithAGeneration(
  server: RunningServer,
  env: Record<string, string>,
): Promise<Kept> {
  const created = await atelier(
    ['account', 'create', '--alias', 'kept', '--api-key-access', '--credits', 'standard=50'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const key = await atelier(['apikey', 'create', '--account', JSON.parse(created.stdout).id], env);
  assert.equal(key.code, 0, key.stderr);
  const apiKey = JSON.parse(key.stdout).secret as string;
  const submitted = await submitOk(server.url, apiKey, {
    modelId: 'mdl_atelier-sketch',
    prompt: 'a lighthouse at dawn',
    width: 512,
    height: 512,
  });
  const task = await waitForTask(server.url, apiKey, submitted.taskId);
  assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
  const { media } = await content(server.url, apiKey, submitted.contentId);
  const mediaId = media[0]!.mediaId;
  const signedUrl = await downloadUrl(server.url, apiKey, mediaId);
  const res = await fetch(signedUrl);
  assert.equal(res.status, 200);
  return { apiKey, mediaId, bytes: Buffer.from(await res.arrayBuffer()), signedUrl };
}

async function downloadUrl(url: string, apiKey: string, mediaId: string): Promise<string> {
  const data = await gqlOk<{ getDownloadUrls: { url: string }[] }>(
    url,
    apiKey,
    'query D($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { url } }',
    { ids: [mediaId] },
  );
  return data.getDownloadUrls[0]!.url;
}

/** The restored server has the account, its balance and the result, under both URLs. */
async function assertRestored(server: RunningServer, kept: Kept): Promise<void> {
  assert.deepEqual(await balances(server.url, kept.apiKey), { standard: 49 });
  const fresh = await fetch(await downloadUrl(server.url, kept.apiKey, kept.mediaId));
  assert.equal(fresh.status, 200);
  assert.deepEqual(Buffer.from(await fresh.arrayBuffer()), kept.bytes);
  // Signed before the backup, by a server at another address: only the path and query count.
  const signed = new URL(kept.signedUrl);
  const old = await fetch(`${server.url}${signed.pathname}${signed.search}`);
  assert.equal(old.status, 200);
  assert.deepEqual(Buffer.from(await old.arrayBuffer()), kept.bytes);
}

describe('docs/backups.md', () => {
  const dirs: string[] = [];
  const servers: RunningServer[] = [];
  const drops: Array<() => Promise<void>> = [];
  after(async () => {
    for (const server of servers) await server.stop();
    for (const drop of drops) await drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const newDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-backup-'));
    dirs.push(dir);
    return dir;
  };
  const serve = async (env: Record<string, string>) => {
    const server = await startServer(env);
    servers.push(server);
    return server;
  };

  it('embedded database: stop, copy the data directory, start on the copy', async () => {
    // A migrated empty data directory (test/helpers/data-dir.ts) spares the first start initdb.
    const data = await migratedDataDir('atelier-backup-data-');
    dirs.push(data);
    const backup = path.join(newDir(), 'atelier-backup');
    const server = await serve({ DATA_DIR: data });
    const kept = await accountWithAGeneration(server, { DATA_DIR: data });
    assert.equal(await server.stop(), 0);

    await run('cp', ['-a', data, backup]);

    const restored = await serve({ DATA_DIR: backup });
    await assertRestored(restored, kept);
  });

  it('PostgreSQL: pg_dump while serving, then the media, pg_restore into a new database', {
    skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : withoutPgDump,
  }, async () => {
    const dir = newDir();
    const source = await createEmptyPostgresDatabase();
    drops.push(source.drop);
    const env = { DATABASE_URL: source.url, DATA_DIR: path.join(dir, 'node') };
    const migrated = await atelier(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const server = await serve(env);
    const kept = await accountWithAGeneration(server, env);

    // The page's commands: the dump first, while serving, then the media directory.
    const dump = path.join(dir, 'atelier.dump');
    await run('pg_dump', ['--format=custom', `--file=${dump}`, source.url]);
    await run('cp', ['-a', path.join(dir, 'node', 'files'), path.join(dir, 'files-backup')]);

    const target = await createEmptyPostgresDatabase();
    drops.push(target.drop);
    await run('pg_restore', ['--no-owner', `--dbname=${target.url}`, dump]);
    const restoredEnv = { DATABASE_URL: target.url, DATA_DIR: path.join(dir, 'restored') };
    await run('mkdir', ['-p', restoredEnv.DATA_DIR]);
    await run('cp', ['-a', path.join(dir, 'files-backup'), path.join(dir, 'restored', 'files')]);
    const check = await atelier(['migrate'], restoredEnv);
    assert.equal(check.code, 0, check.stderr);
    assert.deepEqual(JSON.parse(check.stdout), { applied: [] });

    const restored = await serve(restoredEnv);
    await assertRestored(restored, kept);
  });
});
