import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';
import { restrictToOwner } from './data-dir-modes.ts';
import { defaultTemplateRoot, seedFromTemplate } from './pglite-template.ts';
import { nameStatementsOn, prepareStatementsOn } from './prepared.ts';
import type { Tables } from './schema.ts';

export type Db = Kysely<Tables>;
/** Anything a store function can run a query on: the database or an open transaction. */
export type Queryable = Kysely<Tables> | Transaction<Tables>;

export type Backend = 'pglite' | 'postgres';

/** Where the data lives: embedded (a directory, or memory for tests) or a PostgreSQL server. */
export type DatabaseLocation =
  | {
      readonly backend: 'pglite';
      readonly dataDir: string | null;
      /**
       * Where a new data directory's template is kept (src/store/pglite-template.ts); by
       * default the user's cache directory; null to always run initdb.
       */
      readonly templateRoot?: string | null;
    }
  | {
      readonly backend: 'postgres';
      readonly url: string;
      readonly poolSize?: number;
      /** How long a query waits for a connection (a new one, or a free one of the pool). */
      readonly connectTimeoutMs?: number;
      /**
       * How long one statement may take: PostgreSQL cancels it past this (`statement_timeout`,
       * so it commits nothing), and the client stops waiting for its answer a little later (a
       * stalled server or route answers nothing at all). 0: no bound (migrations).
       */
      readonly statementTimeoutMs?: number;
      readonly onIdleClientError?: (error: Error) => void;
      /** The hot statements as named prepared statements (store/prepared.ts); default true. */
      readonly preparedStatements?: boolean;
    };

export interface Database {
  readonly db: Db;
  readonly backend: Backend;
  /** The PostgreSQL URL (for connections outside the pool, e.g. LISTEN); null for PGlite. */
  readonly connectionUrl: string | null;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * How much longer than `statement_timeout` the client waits for an answer: PostgreSQL's own
 * cancellation comes first when the server is there, a definite answer (nothing committed);
 * the client's timeout only for a server or route gone silent.
 */
const clientGraceMs = 250;

/**
 * Ends a connection whose answer did not come in time (node-postgres' "Query read timeout"):
 * the statement may still be running there, its answer still to come, so the connection is not
 * reused; the pool opens a fresh one. Not waited for: a silent server may never acknowledge.
 */
function endOnSilence(client: pg.ClientBase): void {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  client.query = ((...args: unknown[]) => {
    const running = query(...args) as Promise<unknown> | undefined;
    // A callback-style call answers through its callback: left as it is.
    return running?.catch((error: unknown) => {
      if ((error as Error).message === 'Query read timeout') {
        (client as pg.Client).end().catch(() => {});
      }
      throw error;
    });
  }) as typeof client.query;
}

// int8 (count(*), sums) arrives as a string from pg; our amounts fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/**
 * How PGlite starts Postgres: its own parameters (they are replaced, not added to, so they are
 * kept), and a small buffer cache. initdb writes `shared_buffers = 128MB`, about 130 MiB of this
 * process's memory touched at start for a database that is small and local; 8MB (1,024 pages)
 * holds its hot pages: 16MB cost 10 MiB more idle RSS for GraphQL reads within 2 % of the same
 * rate (bench/start, bench/graphql; docs/performance.md, "Start and footprint"). One backend in single-user
 * mode needs no more connections.
 * Given at every start, so an existing data directory gets them too.
 */
export const pgliteStartParams: readonly string[] = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=8MB',
  '-c',
  'max_connections=5',
];

/**
 * Opens the database. With PGlite, Kysely's runtime driver holds a mutex around its single
 * connection (the adapter declares `supportsMultipleConnections = false`), so one transaction
 * owns PGlite at a time and concurrent requests never run inside each other's transactions.
 */
export async function openDatabase(location: DatabaseLocation): Promise<Database> {
  if (location.backend === 'postgres') {
    const statementMs = location.statementTimeoutMs ?? 0;
    const pool = new pg.Pool({
      connectionString: location.url,
      max: location.poolSize ?? 10,
      // A server that accepts connections but never answers fails a query, not hangs it.
      connectionTimeoutMillis: location.connectTimeoutMs ?? 10_000, // 10 seconds
      keepAlive: true,
      ...(statementMs > 0
        ? { statement_timeout: statementMs, query_timeout: statementMs + clientGraceMs }
        : {}),
    });
    // An idle client whose server connection drops (a restart, a failover, a forced DROP)
    // emits 'error' on the pool; unhandled, that would crash the process. The pool discards
    // that client and the next query opens a fresh connection; errors of running queries still
    // reach their callers.
    pool.on('error', (error) => location.onIdleClientError?.(error));
    // A client the pool has lent out has no such listener: a connection cut between two
    // statements of a transaction would emit an unhandled 'error' and kill the process (found
    // by the PostgreSQL-restart fault test). Its statements fail to their callers anyway, and
    // the pool destroys a client that is no longer queryable when it comes back.
    pool.on('connect', (client) => {
      client.on('error', (error) => location.onIdleClientError?.(error));
      if (location.preparedStatements !== false) nameStatementsOn(client);
      if (statementMs > 0) endOnSilence(client);
    });
    const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
    return wrap(db, 'postgres', location.url, () => {});
  }
  let lock: DataDirLock | undefined;
  let pglite: PGlite;
  if (location.dataDir === null) {
    pglite = new PGlite({ startParams: [...pgliteStartParams] });
  } else {
    lock = lockDataDir(location.dataDir);
    const pgdata = path.join(location.dataDir, 'pglite');
    const templateRoot =
      location.templateRoot === undefined ? defaultTemplateRoot() : location.templateRoot;
    // A new data directory is a copy of the template when there is a usable one; otherwise
    // PGlite runs initdb into it as it opens it.
    const seeded =
      templateRoot !== null &&
      !existsSync(pgdata) &&
      (await seedFromTemplate(pgdata, templateRoot).catch(() => false));
    pglite = new PGlite(pgdata, { startParams: [...pgliteStartParams] });
    if (seeded) {
      try {
        await pglite.waitReady;
      } catch {
        // A copy PGlite cannot open (a template damaged in a way the manifest does not show):
        // start over with initdb, as without a template.
        await pglite.close().catch(() => {});
        rmSync(pgdata, { recursive: true, force: true });
        pglite = new PGlite(pgdata, { startParams: [...pgliteStartParams] });
      }
    }
  }
  try {
    await pglite.waitReady;
  } catch (error) {
    lock?.release();
    throw error;
  }
  // PGlite creates some files (the relation cache's pg_internal.init, at each start) under its
  // own WebAssembly umask of 022, whatever the process's: made the owner's only once it is up.
  if (location.dataDir !== null) restrictToOwner(path.join(location.dataDir, 'pglite'));
  const db = new Kysely<Tables>({
    dialect: new PGliteDialect({
      pglite,
      onCreateConnection: async (connection) => prepareStatementsOn(connection),
    }),
  });
  // Kysely closes PGlite only if a query ever acquired it: a database opened and closed unused
  // (a start refused by its configuration) would stay open, its data directory unlocked.
  return wrap(db, 'pglite', null, async () => {
    try {
      if (!pglite.closed) await pglite.close();
    } finally {
      lock?.release();
    }
  });
}

function wrap(
  db: Db,
  backend: Backend,
  connectionUrl: string | null,
  afterClose: () => void | Promise<void>,
): Database {
  let closed: Promise<void> | undefined;
  return {
    db,
    backend,
    connectionUrl,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close() {
      closed ??= db.destroy().finally(afterClose);
      return closed;
    },
  };
}
