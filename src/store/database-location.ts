import type { Config } from '../config/config.ts';
import { type Database, type DatabaseLocation, openDatabase } from './database.ts';
import { migrateToLatest } from './migrator.ts';

/** Where the configuration puts the database: PGlite in `DATA_DIR`, or `DATABASE_URL`. */
export function databaseLocation(config: Config): DatabaseLocation {
  return config.databaseUrl === undefined
    ? { backend: 'pglite', dataDir: config.dataDir }
    : {
        backend: 'postgres',
        url: config.databaseUrl,
        preparedStatements: config.databasePreparedStatements,
        connectTimeoutMs: config.databaseTimeoutMs,
        statementTimeoutMs: config.databaseTimeoutMs,
      };
}

/**
 * Applies pending migrations. On PostgreSQL through a connection of their own, without the
 * statement bound of the pool (an index built on a year of rows takes its time); PGlite has one
 * connection, and no bound.
 */
export async function migrateUnbounded(
  database: Database,
  location: DatabaseLocation,
): Promise<string[]> {
  if (location.backend === 'pglite')
    return migrateToLatest(database.db, `the embedded database in ${location.dataDir ?? 'memory'}`);
  const unbounded = await openDatabase({
    ...location,
    poolSize: 1,
    statementTimeoutMs: 0,
    preparedStatements: false,
  });
  try {
    return await migrateToLatest(unbounded.db, postgresName(location.url));
  } finally {
    await unbounded.close();
  }
}

/** `PostgreSQL at host:port/database (DATABASE_URL)`: where, without the credentials. */
function postgresName(url: string): string {
  try {
    const { hostname, port, pathname } = new URL(url);
    return `PostgreSQL at ${hostname}:${port || 5432}${pathname} (DATABASE_URL)`;
  } catch {
    return 'PostgreSQL at DATABASE_URL';
  }
}
