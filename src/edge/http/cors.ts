import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { sendAppError } from './error-reply.ts';

/** How long a browser may reuse a preflight answer: 2 hours, Chromium's own cap. */
const preflightMaxAgeSeconds = 7_200;

/**
 * Response headers a page may read besides the safelisted ones: the challenge that starts
 * discovery, the session id, and the rate-limit state a client backs off with.
 */
const exposedHeaders = [
  'www-authenticate',
  'mcp-session-id',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
  'x-request-id',
].join(', ');

/**
 * Who may read a route from another origin. `'*'`: any page, never with credentials (a
 * public document, or an endpoint whose only proof is in the request body). A set: those
 * origins only, echoed back; the route itself refuses every other foreign origin.
 */
export type CorsOrigins = '*' | ReadonlySet<string>;

export interface CorsRule {
  readonly origins: CorsOrigins;
  /** Methods the route answers besides the preflight. */
  readonly methods: readonly string[];
  /** Request headers a page may send (lower case). */
  readonly headers: readonly string[];
}

/** The origin a response may be read from, or null when the page's origin is not allowed. */
function allowedOrigin(origins: CorsOrigins, origin: string | undefined): string | null {
  if (origins === '*') return '*';
  return origin !== undefined && origins.has(origin) ? origin : null;
}

/**
 * An `onRequest` hook giving a route's actual responses their CORS headers. Never
 * `Access-Control-Allow-Credentials`: these routes take a bearer token or nothing, so a page
 * never needs the browser's cookies to call them.
 */
export function corsHeaders(origins: CorsOrigins) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (origins !== '*') reply.header('vary', 'Origin');
    const allowed = allowedOrigin(origins, request.headers.origin);
    if (allowed === null) return;
    reply
      .header('access-control-allow-origin', allowed)
      .header('access-control-expose-headers', exposedHeaders);
  };
}

/**
 * `OPTIONS url`: the preflight answer (Fetch standard, CORS protocol). An origin the rule does
 * not allow gets `403` (110202) without any CORS header, so the browser never sends the request.
 */
export function preflightRoute(app: FastifyInstance, url: string, rule: CorsRule): void {
  app.options(url, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (rule.origins !== '*') reply.header('vary', 'Origin');
    const allowed = allowedOrigin(rule.origins, request.headers.origin);
    if (allowed === null)
      return sendAppError(
        request,
        reply,
        new AppError(ErrorCode.Forbidden, 'This origin may not call this URL.'),
      );
    return reply
      .code(204)
      .header('access-control-allow-origin', allowed)
      .header('access-control-allow-methods', rule.methods.join(', '))
      .header('access-control-allow-headers', rule.headers.join(', '))
      .header('access-control-max-age', preflightMaxAgeSeconds)
      .send();
  });
}
