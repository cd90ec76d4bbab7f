import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { type Backend, type Database, openDatabase } from '../../src/store/database.ts';
import { migrateToLatest } from '../../src/store/migrator.ts';
import { schemaVersion } from '../../src/store/pglite-template.ts';
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
  const copy = await createPostgresDatabase(await postgresTemplate());
  const database = await openDatabase({ backend: 'postgres', url: copy.url, poolSize: 5 });
  return {
    ...database,
    close: async () => {
      await database.close();
      await copy.drop();
    },
  };
}

/** The URL of a fresh, empty PostgreSQL database (for child processes), and its disposal. */
export function createEmptyPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  return createPostgresDatabase();
}

/** A new database on the `TEST_DATABASE_URL` server, empty or a copy of `template`. */
async function createPostgresDatabase(
  template?: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `atelier_test_${randomBytes(6).toString('hex')}`;
  const from = template === undefined ? '' : ` TEMPLATE ${template}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}${from}`));
  return {
    url: databaseUrl(name),
    drop: async () => {
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * A database on the `TEST_DATABASE_URL` server with this code's migrations applied, that
 * `createTestDatabase` copies (`CREATE DATABASE … TEMPLATE`, about 0.05 s) rather than migrating
 * a new one each time (about 0.5 s). Named by the migrations (`schemaVersion`), made once by
 * whichever test process needs it first, under an advisory lock; kept for later runs, like
 * PGlite's template. Nothing connects to it once made, which copying requires.
 */
function postgresTemplate(): Promise<string> {
  templateMade ??= withAdmin(async (admin) => {
    const name = `atelier_test_template_${schemaVersion}`;
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', ['atelier_test_template']);
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      // Made under another name and renamed when whole: a process killed midway leaves no
      // template that looks ready. Those of other schemas go (unless a run still copies one).
      const { rows } = await admin.query<{ datname: string }>(
        "SELECT datname FROM pg_database WHERE datname LIKE 'atelier\\_test\\_template\\_%'",
      );
      for (const { datname } of rows) {
        await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => {});
      }
      const building = `${name}_building`;
      await admin.query(`CREATE DATABASE ${building}`);
      const database = await openDatabase({ backend: 'postgres', url: databaseUrl(building) });
      try {
        await migrateToLatest(database.db);
      } finally {
        await database.close();
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    }
    return name;
  });
  return templateMade;
}
let templateMade: Promise<string> | undefined;

/** The URL of database `name` on the `TEST_DATABASE_URL` server. */
function databaseUrl(name: string): string {
  if (postgresUrl === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `work` on a connection of its own to the `TEST_DATABASE_URL` server. */
async function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  if (postgresUrl === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
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
  // The suite's app keeps its workers: a claim (every poll) or a finish of the previous test's
  // task takes its locks table by table while TRUNCATE takes all of them, and the two can
  // wait for each other. PostgreSQL would break that after deadlock_timeout (1 s) by failing
  // one of them, and three such failures in a row failed a test. So TRUNCATE waits at most
  // 100 ms for a lock, always before a deadlock is declared, and tries again: the worker's
  // statement goes on, and a later try finds the tables free.
  for (let attempt = 1; ; attempt++) {
    try {
      await database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = '100ms'`.execute(trx);
        await sql`TRUNCATE ${tables} RESTART IDENTITY CASCADE`.execute(trx);
      });
      return;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const contended = code === '55P03' || code === '40P01'; // lock_not_available, deadlock
      if (!contended || attempt === 50) throw error;
    }
  }
}
