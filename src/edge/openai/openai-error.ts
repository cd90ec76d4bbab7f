import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AppError, ErrorCode } from '../../shared/errors.ts';
import { httpStatusOf } from '../http/error-status.ts';

/**
 * How an error's Atelier field and `allowed` read in the request the client sent (`count` is
 * `n`, the sizes of a model are `"WxH"` strings). Null for errors outside a generation request.
 */
export interface ParamNames {
  param(field: string): string | null;
  allowed(param: string, allowed: unknown): unknown;
}

/** The parameters every `/v1` route shares, by OpenAI's names: for routes without their own. */
export const commonParamNames: ParamNames = {
  param: (field) =>
    (({ modelId: 'model', idempotencyKey: 'Idempotency-Key' }) as Record<string, string>)[field] ??
    field,
  allowed: (_param, allowed) => allowed,
};

/** The OpenAI error `type` of each catalogue code (the SDK keeps it as `error.type`). */
const typeOf: Readonly<Record<ErrorCode, string>> = {
  [ErrorCode.Unauthenticated]: 'authentication_error',
  [ErrorCode.IdentityUnavailable]: 'server_error',
  [ErrorCode.Forbidden]: 'permission_error',
  [ErrorCode.AccountDeleted]: 'permission_error',
  [ErrorCode.InvalidInput]: 'invalid_request_error',
  [ErrorCode.UnsupportedCombination]: 'invalid_request_error',
  [ErrorCode.IdempotencyConflict]: 'invalid_request_error',
  [ErrorCode.InsufficientCredits]: 'insufficient_quota',
  [ErrorCode.NotFound]: 'invalid_request_error',
  [ErrorCode.RateLimited]: 'rate_limit_error',
  [ErrorCode.QueryTooLarge]: 'invalid_request_error',
  [ErrorCode.GenerationPending]: 'server_error',
  [ErrorCode.GenerationFailed]: 'server_error',
  [ErrorCode.Internal]: 'server_error',
};

/**
 * The body `{ "error": { message, type, param, code, … } }` of an AppError on `/v1`: `code` is
 * the catalogue code as a string, `param` the request field it is about (null if none), and
 * the error's other details (`allowed`, `required`, `contentId`…) follow, as facts a client may
 * read. The list of problems is the message, each named by its parameter.
 */
export function openAiErrorBody(error: AppError, names: ParamNames = commonParamNames) {
  const { field, problems, allowed, ...details } = error.details;
  const param = typeof field === 'string' ? (names?.param(field) ?? field) : null;
  return {
    error: {
      message: messageOf(error.message, problems, names),
      type: typeOf[error.code],
      param,
      code: error.code,
      ...(allowed === undefined || param === null
        ? {}
        : { allowed: names?.allowed(param, allowed) ?? allowed }),
      ...details,
    },
  };
}

/**
 * Answers `error` on `/v1` with its catalogue status. `x-should-retry` tells the official SDK,
 * which otherwise retries every 409, 429 and 5xx by itself, whether the same request may
 * succeed: by default whether the code is retryable, so a refused or unfinished generation is
 * never resubmitted (and charged again) behind the caller's back.
 */
export function sendOpenAiError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: AppError,
  options: { names?: ParamNames | undefined; retry?: boolean; status?: number } = {},
): FastifyReply {
  if (error.cause !== undefined && error.code !== ErrorCode.IdentityUnavailable)
    request.log.warn({ err: error.cause, code: error.code }, 'request refused');
  if (error.code === ErrorCode.IdentityUnavailable) reply.header('retry-after', 1);
  return reply
    .code(options.status ?? httpStatusOf[error.code])
    .header('cache-control', 'no-store')
    .header('x-should-retry', String(options.retry ?? error.retryable))
    .send(openAiErrorBody(error, options.names));
}

/** "size: 300x300 is not offered…" rather than the service's "width: …", one per problem. */
function messageOf(message: string, problems: unknown, names: ParamNames | undefined): string {
  if (names === undefined || !Array.isArray(problems) || problems.length === 0) return message;
  return (problems as { field: string; message: string }[])
    .map((p) => `${names.param(p.field) ?? p.field}: ${p.message}`)
    .join('; ');
}
