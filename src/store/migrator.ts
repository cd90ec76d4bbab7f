import { type Kysely, sql } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import { StartupError } from '../shared/startup-error.ts';
import * as foundation from './migrations/0001-foundation.ts';
import * as generations from './migrations/0002-generations.ts';
import * as identities from './migrations/0003-identities.ts';
import * as oauth from './migrations/0004-oauth.ts';
import * as library from './migrations/0005-library.ts';
import * as rateLimits from './migrations/0006-rate-limits.ts';
import * as runningByAccount from './migrations/0007-running-by-account.ts';
import * as pendingUploads from './migrations/0008-pending-uploads.ts';
import * as engineCheckpoints from './migrations/0009-engine-checkpoints.ts';
import * as idpIssuer from './migrations/0010-idp-issuer.ts';
import * as claimFunction from './migrations/0011-claim-function.ts';
import * as spendingLimits from './migrations/0012-spending-limits.ts';
import * as taskEventLog from './migrations/0013-task-event-log.ts';
import * as webhooks from './migrations/0014-webhooks.ts';
import * as revokedCodes from './migrations/0015-revoked-codes.ts';
import * as backendPools from './migrations/0016-backend-pools.ts';
import * as operating from './migrations/0017-operating.ts';
import * as usageReport from './migrations/0018-usage-report.ts';
import * as traceContext from './migrations/0019-trace-context.ts';
import * as contentDeletion from './migrations/0020-content-deletion.ts';
import * as finishThenClaim from './migrations/0021-finish-then-claim.ts';

/** Every migration, in order. One set for PGlite and PostgreSQL alike. */
const migrations: Readonly<Record<string, Migration>> = {
  '0001-foundation': foundation,
  '0002-generations': generations,
  '0003-identities': identities,
  '0004-oauth': oauth,
  '0005-library': library,
  '0006-rate-limits': rateLimits,
  '0007-running-by-account': runningByAccount,
  '0008-pending-uploads': pendingUploads,
  '0009-engine-checkpoints': engineCheckpoints,
  '0010-idp-issuer': idpIssuer,
  '0011-claim-function': claimFunction,
  '0012-spending-limits': spendingLimits,
  '0013-task-event-log': taskEventLog,
  '0014-webhooks': webhooks,
  '0015-revoked-codes': revokedCodes,
  '0016-backend-pools': backendPools,
  '0017-operating': operating,
  '0018-usage-report': usageReport,
  '0019-trace-context': traceContext,
  '0020-content-deletion': contentDeletion,
  '0021-finish-then-claim': finishThenClaim,
};

function migratorFor(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => ({ ...migrations }) } });
}

/**
 * Applies pending migrations; returns the names applied by this call. `where` names the
 * database for the operator (`PostgreSQL at db.example:5432/atelier (DATABASE_URL)`), for the
 * failures before any migration runs: a database that cannot be reached, or one a newer
 * release migrated (a StartupError, printed without a stack).
 */
export async function migrateToLatest(db: Kysely<any>, where = 'the database'): Promise<string[]> {
  const applied = await appliedMigrations(db).catch((error: unknown) => {
    throw new StartupError(`Cannot open ${where}: ${(error as Error).message}`, { cause: error });
  });
  // Every start after the first: nothing to do, seen in one query. The migrator would see it
  // too, but only after reading the catalog three times and taking its lock (about 100 ms of a
  // restart on the embedded database). Anything else — a new database, migrations pending,
  // or some this code does not know — goes to the migrator, which applies or refuses them.
  const known = Object.keys(migrations);
  if (applied.length === known.length && applied.every((name, i) => name === known[i])) return [];
  const { error, results = [] } = await migratorFor(db).migrateToLatest();
  if (error !== undefined) {
    const message = (error as Error).message;
    const failed = results.find((r) => r.status === 'Error')?.migrationName;
    if (failed !== undefined)
      throw new Error(`Migration ${failed} failed: ${message}`, { cause: error });
    if (message.startsWith('corrupted migrations'))
      throw new StartupError(
        `${where} was migrated by a newer release of Atelier (${message}): start that release, or restore a backup taken before the upgrade (docs/upgrading.md).`,
        { cause: error },
      );
    throw new StartupError(`Cannot open ${where}: ${message}`, { cause: error });
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Names of migrations this code knows that the database has not applied. Asked by every
 * `/readyz`, so it is one query, not the migrator's catalog reads.
 */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const applied = new Set(await appliedMigrations(db));
  return Object.keys(migrations).filter((name) => !applied.has(name));
}

/** The migrations the database has applied, by name in order; none in a new database. */
async function appliedMigrations(db: Kysely<any>): Promise<string[]> {
  try {
    const { rows } = await sql<{
      name: string;
    }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db);
    return rows.map((row) => row.name);
  } catch (error) {
    // undefined_table: Kysely's migrator creates its table with the first migration.
    if ((error as { code?: unknown }).code === '42P01') return [];
    throw error;
  }
}
