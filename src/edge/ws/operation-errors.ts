import type { FastifyBaseLogger } from 'fastify';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { OutageLog } from '../../observability/outage-log.ts';
import { databaseUnavailable, outageError } from '../../services/database-outage.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import {
  appErrorExtensions,
  type MessageOptions,
  withoutSuggestions,
} from '../graphql/error-formatter.ts';

/** A 150029 for an operation beyond a WebSocket allowance; the socket stays open. */
export function rateLimited(message: string, retryAfterSeconds?: number): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code: ErrorCode.RateLimited,
      retryable: true,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    },
  });
}

/**
 * What an unexpected failure before an operation runs (a store, a hook) becomes: logged once
 * here under the request id, and that operation's error 190000 with the id. Left to graphql-ws,
 * it would go to the console and close the whole socket with the error's message as reason.
 */
export function unexpectedError(
  error: unknown,
  requestId: string,
  log: FastifyBaseLogger,
  outages: OutageLog,
): AppError {
  const outage = outageError(error);
  if (outage !== null) {
    outages.report(databaseUnavailable, error, { requestId });
    return outage;
  }
  log.error({ err: error, requestId }, 'unhandled error');
  return new AppError(
    ErrorCode.Internal,
    `Internal error; the request id ${requestId} identifies it in the server log.`,
    { requestId },
  );
}

/**
 * The errors of an operation refused before execution (parse, validation, limits, refusals):
 * 120001 unless they carry a code, each with the operation's request id.
 */
export function operationErrors(
  errors: readonly GraphQLError[],
  requestId: string,
  wording: MessageOptions,
): GraphQLFormattedError[] {
  return errors.map((error) => {
    const original = error.originalError;
    const coded = original instanceof AppError ? appErrorExtensions(original, requestId) : {};
    return {
      message: wording.suggestions ? error.message : withoutSuggestions(error.message),
      ...(error.path ? { path: error.path } : {}),
      extensions: {
        code: ErrorCode.InvalidInput,
        retryable: false,
        ...error.extensions,
        requestId,
        ...coded,
      },
    };
  });
}
