import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { type Backend, type Database, openDatabase } from '../../src/store/database.ts';
import { migrateToLatest } from '../../src/store/migrator.ts';
import { postgresUrl } from './backends.ts';

/**
 * A fresh, migrated, empty database: PGlite in a new temporary directory, or a new database created on the
 * `TEST_DATABASE_URL` server and dropped again by `close()`.
 */
export async function createTestDatabase(backend: Backend): Promise<Database> {
  if (backend === 'pglite') {
    // A data directory copied from the template `npm install` made (about 0.1 s), not an
    // in-memory database, which would run initdb and the migrations (seconds of CPU) each time.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-test-db-'));
    process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
    const database = await openDatabase({ backend: 'pglite', dataDir });
    return {
      ...database,
      close: async () => {
        await database.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const empty = await createEmptyPostgresDatabase();
  const database = await openDatabase({ backend: 'postgres', url: empty.url, poolSize: 5 });
  await migrateToLatest(database.db);
  return {
    ...database,
    close: async () => {
      await database.close();
      await empty.drop();
    },
  };
}

/** The URL of a fresh, empty PostgreSQL database (for child processes), and its disposal. */
export async function createEmptyPostgresDatabase(): Promise<{
  url: string;
  drop(): Promise<void>;
}> {
  if (postgresUrl === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const name = `atelier_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Empties every table (the migration bookkeeping excepted) so the next test starts from a
 * fresh database without paying for a new one (~2 s for PGlite, a CREATE DATABASE on pg).
 */
export async function resetDatabase(database: Database): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema() AND tablename NOT LIKE 'kysely_%'`.execute(database.db);
  if (rows.length === 0) return;
  const tables = sql.join(rows.map((r) => sql.table(r.name)));
  // A worker of the suite's app may be finishing a task of the previous test: its row locks
  // and TRUNCATE's table locks can meet in a deadlock, which PostgreSQL breaks by failing one.
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`TRUNCATE ${tables} RESTART IDENTITY CASCADE`.execute(database.db);
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== '40P01' || attempt === 3) throw error;
    }
  }
}
