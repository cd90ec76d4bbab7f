import type { FastifyReply, FastifyRequest } from 'fastify';
import { type FormattedExecutionResult, GraphQLError } from 'graphql';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { httpStatusOf } from '../http/error-status.ts';
import {
  errorBody,
  flattenErrors,
  isInternal,
  type MessageOptions,
  toGraphqlError,
} from './error-formatter.ts';
import { GraphqlMediaType, requestErrorStatus, responseMediaType } from './media-type.ts';

/** The status and body Mercurius sends for a result with errors. */
export interface ErrorAnswer {
  statusCode: number;
  response: FormattedExecutionResult;
}

/**
 * The HTTP answer to a GraphQL result with errors, after GraphQL over HTTP: a result with
 * data (or field errors) is 200; a request error (the document does not parse, validate or
 * coerce its variables) is 400 without `data` for application/graphql-response+json and the
 * legacy 200 with `data: null` for application/json; an HTTP request that is not a GraphQL
 * request at all (body not JSON, wrong parameter types) is 400 in both.
 */
export function answerErrors(
  execution: { data?: FormattedExecutionResult['data']; errors?: readonly GraphQLError[] },
  reply: FastifyReply,
  options: MessageOptions & { maxBodyBytes: number },
): ErrorAnswer {
  const request = reply.request;
  const mediaType = responseMediaType(request);
  const causes = (execution.errors ?? []).map((e) => codeOf(e.originalError));
  // Fastify refused the body (MAX_BODY_BYTES) before Mercurius could read it.
  if (causes.includes('FST_ERR_CTP_BODY_TOO_LARGE')) {
    const error = new AppError(
      ErrorCode.QueryTooLarge,
      'The request body is larger than the server accepts; send smaller variables.',
      { limit: 'bodyBytes', max: options.maxBodyBytes },
    );
    return { statusCode: 413, response: errorBody(error, request.id, mediaType) };
  }
  // A GET that is not a query: GET is safe, so the method is what is wrong (RFC 9110 §15.5.6).
  if (causes.includes('MER_ERR_METHOD_NOT_ALLOWED')) {
    reply.header('allow', 'POST');
    const error = new AppError(
      ErrorCode.InvalidInput,
      'GET /graphql answers queries only; send mutations with POST.',
      { field: 'query' },
    );
    return { statusCode: 405, response: errorBody(error, request.id, mediaType) };
  }
  const errors = flattenErrors(execution.errors ?? []);
  const formatted = errors.map((e) =>
    toGraphqlError(e, request.id, request.log, request.server.outages, options),
  );
  if (execution.data != null || errors.some((e) => e.path !== undefined)) {
    return { statusCode: 200, response: { data: execution.data ?? null, errors: formatted } };
  }
  // Something broke before execution (a hook, a store): a server error, never the caller's.
  const statusCode = formatted.some(isInternal)
    ? httpStatusOf[ErrorCode.Internal]
    : errors.some(isHttpRequestError)
      ? 400
      : requestErrorStatus(mediaType);
  return {
    statusCode,
    response:
      mediaType === GraphqlMediaType.graphqlResponse
        ? { errors: formatted }
        : { data: null, errors: formatted },
  };
}

/**
 * Fastify's own refusals (body parsing, JSON schema of the parameters) carry an HTTP status;
 * errors of the GraphQL document (parse, validation, variables) do not.
 */
function isHttpRequestError(error: GraphQLError | Error): boolean {
  const cause = error instanceof GraphQLError ? error.originalError : error;
  return typeof (cause as { statusCode?: unknown } | undefined)?.statusCode === 'number';
}

function codeOf(error: Error | undefined): unknown {
  return (error as { code?: unknown } | undefined)?.code;
}

/** Sets the negotiated media type on a JSON answer of `/graphql` (the body is the same). */
export async function setGraphqlMediaType(request: FastifyRequest, reply: FastifyReply) {
  const mediaType = responseMediaType(request);
  const current = String(reply.getHeader('content-type') ?? '');
  if (mediaType !== GraphqlMediaType.json && current.startsWith('application/json')) {
    reply.header('content-type', mediaType);
  }
}
