import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../../shared/errors.ts';
import { httpStatusOf } from './error-status.ts';

/**
 * Answers `error` the way every HTTP route outside GraphQL does: its catalogue status
 * ({@link httpStatusOf}) unless the route passes the one a spec names instead, and the body
 * `{ "error": { …details, code, message, retryable, requestId } }`. Headers already set on
 * `reply` (a challenge, `cache-control`) are kept.
 */
export function sendAppError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: AppError,
  status: number = httpStatusOf[error.code],
): FastifyReply {
  return reply.code(status).send({
    error: {
      ...error.details,
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      requestId: request.id,
    },
  });
}
