import { AppError, ErrorCode } from '../shared/errors.ts';

/**
 * The 100102 of a credential check that could not reach the database (spec §7: "identity
 * verification or account lookup temporarily unavailable"). The client learns only that it
 * may retry; the driver's error stays the cause, for the log.
 */
export function credentialsUnavailable(cause: unknown): AppError {
  return new AppError(
    ErrorCode.IdentityUnavailable,
    'Credentials cannot be checked right now; try again shortly.',
    {},
    { cause },
  );
}

/**
 * Runs a credential lookup: any failure that is not already an AppError is the store's, not
 * the credential's, so it becomes {@link credentialsUnavailable} — never a 100101 that would
 * send a client with a good key to ask for a new one, nor a driver message on the wire.
 */
export async function lookUpCredential<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw credentialsUnavailable(error);
  }
}
