import { AppError, ErrorCode } from '../shared/errors.ts';
import { isDatabaseUnavailable } from '../store/database-errors.ts';

/**
 * The 100102 of a request that met the database away, stalled or cut (spec §7: "temporarily
 * unavailable"; the client backs off, and reconciles an uncertain mutation before resending),
 * instead of an internal error; null for any other error. The driver's error is its cause.
 */
export function outageError(error: unknown): AppError | null {
  if (error instanceof AppError || !isDatabaseUnavailable(error)) return null;
  return new AppError(
    ErrorCode.IdentityUnavailable,
    'The database cannot be reached right now; try again shortly.',
    {},
    { cause: error },
  );
}

/** The phrase outages of the database are logged under (observability/outage-log.ts). */
export const databaseUnavailable = 'database unavailable';
