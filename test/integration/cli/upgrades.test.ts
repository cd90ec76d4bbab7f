import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/store/database.ts';
import { migrateToLatest, pendingMigrations } from '../../../src/store/migrator.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier } from '../../helpers/cli.ts';
import { migratedDataDir } from '../../helpers/data-dir.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { freePort } from '../../helpers/net.ts';

// docs/upgrading.md: nodes starting at once on PostgreSQL take turns on the migrations (one
// applies them, the others find nothing to do), and code older than the database — one that
// lacks a migration the database has run — refuses to start rather than run on a schema it
// does not know, changing nothing.

const migrationFiles = readdirSync(new URL('../../../src/store/migrations/', import.meta.url))
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.replace(/\.ts$/, ''))
  .sort();

describe('upgrades', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('two migrate commands at once on a new PostgreSQL database: one applies all, one none', {
    skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
  }, async () => {
    const empty = await createEmptyPostgresDatabase();
    cleanups.push(empty.drop);
    const env = { DATABASE_URL: empty.url };
    const runs = await Promise.all([atelier(['migrate'], env), atelier(['migrate'], env)]);
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const applied = runs.map((run) => (JSON.parse(run.stdout) as { applied: string[] }).applied);
    assert.deepEqual(
      applied.map((names) => names.length).sort((a, b) => a - b),
      [0, migrationFiles.length],
    );
    assert.deepEqual(applied.flat(), migrationFiles);
  });

  it('code older than the database refuses to start or migrate, and changes nothing', async () => {
    const dataDir = await migratedDataDir('atelier-upgrades-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // A migration of a newer release, as the database of a newer Atelier has it.
    const database = await openDatabase({ backend: 'pglite', dataDir });
    await sql`INSERT INTO kysely_migration (name, timestamp)
              VALUES ('9999-from-a-newer-release', '2031-03-01T00:00:00.000Z')`.execute(
      database.db,
    );
    await database.close();

    const port = String(await freePort());
    for (const command of [['migrate'], ['serve'], ['account', 'list']]) {
      const result = await atelier(command, { DATA_DIR: dataDir, PORT: port });
      assert.equal(result.code, 1, `${command.join(' ')}: ${result.stdout}`);
      assert.match(
        result.stderr,
        /corrupted migrations: previously executed migration 9999-from-a-newer-release is missing/,
      );
    }
    assert.equal(existsSync(`${dataDir}/control/atelier.sock`), false, 'never served');

    const reopened = await openDatabase({ backend: 'pglite', dataDir });
    try {
      const { rows } = await sql<{ name: string }>`
        SELECT name FROM kysely_migration ORDER BY name`.execute(reopened.db);
      assert.deepEqual(
        rows.map((row) => row.name),
        [...migrationFiles, '9999-from-a-newer-release'],
      );
      const { rows: accounts } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM accounts`.execute(reopened.db);
      assert.deepEqual(accounts, [{ n: 0 }], 'no first-run account was created');
    } finally {
      await reopened.close();
    }
  });

  it('pending migrations are named in one query, and a start applies just those', {
    skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
  }, async () => {
    const empty = await createEmptyPostgresDatabase();
    cleanups.push(empty.drop);
    const database = await openDatabase({ backend: 'postgres', url: empty.url, poolSize: 2 });
    cleanups.push(() => database.close());
    assert.deepEqual(await pendingMigrations(database.db), migrationFiles, 'a new database');
    assert.deepEqual(await migrateToLatest(database.db), migrationFiles);
    assert.deepEqual(await pendingMigrations(database.db), []);
    assert.deepEqual(await migrateToLatest(database.db), [], 'up to date: nothing applied');

    // As the database of the release before 0021 was: without its functions, and its record.
    const newest = '0021-finish-then-claim';
    assert.equal(migrationFiles.at(-1), newest, 'a newer migration: undo it here instead');
    await sql`DROP FUNCTION atelier_finish_ok_then_claim`.execute(database.db);
    await sql`DROP FUNCTION atelier_finish_ok`.execute(database.db);
    await sql`DELETE FROM kysely_migration WHERE name = ${newest}`.execute(database.db);
    assert.deepEqual(await pendingMigrations(database.db), [newest]);
    assert.deepEqual(await migrateToLatest(database.db), [newest]);
    assert.deepEqual(await pendingMigrations(database.db), []);
  });
});
