import type { FastifyBaseLogger } from 'fastify';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { AuthResult } from '../../auth/authenticate.ts';
import type { OutageLog } from '../../observability/outage-log.ts';
import { databaseUnavailable, outageError } from '../../services/database-outage.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { GraphqlMediaType } from './media-type.ts';
import { generationMutationFields } from './schema/generation.schema.ts';

/**
 * Maps errors to the wire: an AppError keeps its code and details; a problem with the request
 * itself (syntax, validation, variables, a missing operationName) is 120001; anything else is
 * a 190000 whose detail (message, locations, stack) stays in the log under the request id
 * (STYLE habit 6).
 */
export function toGraphqlError(
  error: GraphQLError,
  requestId: string,
  log: FastifyBaseLogger,
  outages: OutageLog,
  options: MessageOptions = { suggestions: true },
): GraphQLFormattedError {
  const original = error.originalError;
  const base = {
    message: options.suggestions ? error.message : withoutSuggestions(error.message),
    ...(error.locations === undefined ? {} : { locations: error.locations }),
    ...(error.path === undefined ? {} : { path: error.path }),
  };
  // On a generation mutation, say whether a charged submission exists (DESIGN.md errors).
  const root = error.path?.[0];
  const charged =
    typeof root === 'string' && generationMutationFields.has(root)
      ? { charged: (error.path?.length ?? 0) > 1 }
      : {};
  // The database away is an outage, not a bug: 100102, one log line for many requests.
  const outage = outageError(original);
  if (outage !== null) outages.report(databaseUnavailable, original, { requestId });
  const known = original instanceof AppError ? original : outage;
  if (known !== null) {
    return {
      ...base,
      message: known.message,
      // A submission that may have committed says so itself (`charged: null`).
      extensions: { ...charged, ...appErrorExtensions(known, requestId) },
    };
  }
  if (error.path === undefined && isRequestProblem(original)) {
    return {
      ...base,
      extensions: { code: ErrorCode.InvalidInput, retryable: false, requestId },
    };
  }
  log.error({ err: original ?? error, requestId, path: error.path }, 'unhandled error');
  return {
    ...base,
    message: `Internal error; the request id ${requestId} identifies it in the server log.`,
    extensions: { code: ErrorCode.Internal, retryable: true, requestId, ...charged },
  };
}

/** How error messages are worded for the caller. */
export interface MessageOptions {
  /**
   * Whether graphql-js' "Did you mean …?" hints stay. They name fields, arguments, types and
   * enum values the schema has, so they go wherever introspection is off.
   */
  readonly suggestions: boolean;
}

/**
 * The message without graphql-js' trailing hint (`didYouMean`: ` Did you mean "x"?`, `… the
 * enum value "X"?`, `… to use an inline fragment on "T"?`), in validation and variable errors.
 */
export function withoutSuggestions(message: string): string {
  return message.replace(/ Did you mean .*\?$/s, '');
}

/**
 * Whether an error outside any field is the request's fault: GraphQL's own (syntax,
 * validation, variables: no original error, or a GraphQLError) or Fastify's 4xx (a body that
 * does not parse). Anything else thrown before execution — a hook, a store — is internal:
 * never a 120001 carrying a driver's message.
 */
function isRequestProblem(original: Error | undefined): boolean {
  if (original === undefined || original instanceof GraphQLError) return true;
  const status = (original as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** Whether a formatted error is a 190000 (the HTTP answer is then 500, not 400). */
export function isInternal(error: GraphQLFormattedError): boolean {
  return error.extensions?.code === ErrorCode.Internal;
}

export function appErrorExtensions(error: AppError, requestId: string): Record<string, unknown> {
  return { ...error.details, code: error.code, retryable: error.retryable, requestId };
}

/**
 * The body of an error answered before execution (e.g. HTTP 401 for an invalid API key):
 * no `data` entry for application/graphql-response+json, `data: null` for the legacy type.
 */
export function errorBody(
  error: AppError,
  requestId: string,
  mediaType: GraphqlMediaType = GraphqlMediaType.json,
): { data?: null; errors: GraphQLFormattedError[] } {
  const errors = [{ message: error.message, extensions: appErrorExtensions(error, requestId) }];
  return mediaType === GraphqlMediaType.json ? { data: null, errors } : { errors };
}

/** Mercurius wraps validation failures in one error holding the list; unwrap them. */
export function flattenErrors(errors: readonly GraphQLError[]): GraphQLError[] {
  return errors.flatMap((error) => {
    const inner = (error.originalError as { errors?: unknown } | undefined)?.errors;
    return Array.isArray(inner) ? (inner as GraphQLError[]) : [error];
  });
}

/**
 * Why credentials were refused, for the log only: the client's message is generic (which
 * check an ID token failed) or says nothing of internals (a database that is away); the
 * error's cause holds the rest, logged under the request id of `log`.
 */
export function logRefusal(log: FastifyBaseLogger, auth: AuthResult, outages: OutageLog): void {
  if (auth.kind !== 'refused' || auth.error.cause === undefined) return;
  if (auth.error.retryable) outages.report('credentials could not be checked', auth.error.cause);
  else log.info({ reason: auth.error.cause, code: auth.error.code }, 'credentials refused');
}
