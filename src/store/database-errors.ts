/**
 * What a failed statement says about the database, from the driver's error (node-postgres;
 * PGlite runs in-process and has no connection to lose). Three cases matter to callers:
 * - PostgreSQL answered with an error (a SQLSTATE): the statement did not commit;
 * - no connection could be had: nothing was sent, nothing committed;
 * - the connection broke or went silent after the statement may have been sent: it may have
 *   committed, and only a later read can tell.
 */

/** SQLSTATE classes of a server that is going away or not taking connections. */
const unavailableStates = /^(08|57P0[1-3])/;
/** A connection that could not be opened, or was not answered in time. */
const neverSent = [
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
];
const socketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

interface DriverError {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
}

/** Whether the database is unreachable or went away: an outage, not a wrong statement. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = (error ?? {}) as DriverError;
  if (typeof e.code === 'string' && (socketCodes.has(e.code) || unavailableStates.test(e.code)))
    return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return (
    neverSent.includes(message) ||
    message.startsWith('Connection terminated') ||
    message === 'Query read timeout' ||
    (e.cause !== undefined && e.cause !== error && isDatabaseUnavailable(e.cause))
  );
}

/**
 * Whether a statement that failed this way may still have committed: the connection broke, or
 * its answer did not come in time, after it was sent. A refusal by PostgreSQL, or a
 * connection never had (refused, timed out while connecting), committed nothing.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (!isDatabaseUnavailable(error)) return false;
  const e = (error ?? {}) as DriverError;
  if (
    e.code === 'ECONNREFUSED' ||
    (typeof e.code === 'string' && /^(08001|08004|57P03)$/.test(e.code))
  )
    return false;
  return !neverSent.includes(typeof e.message === 'string' ? e.message : '');
}

/** Whether the database went silent (an answer that did not come in time) rather than away. */
export function databaseSilent(error: unknown): boolean {
  const e = (error ?? {}) as DriverError;
  return (
    e.message === 'Query read timeout' || e.message === 'timeout exceeded when trying to connect'
  );
}
