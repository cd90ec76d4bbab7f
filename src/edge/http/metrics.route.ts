import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../../observability/metrics.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { constantTimeEqual, sha256Hex } from '../../shared/secrets.ts';
import { sendAppError } from './error-reply.ts';

/**
 * The HTTP histogram behind `/metrics`: every response of the app is observed under its route
 * pattern (`/media/:mediaId`), never the raw URL, so label values stay few; a request no route
 * matched counts as `not_found`. With `serve`, the same app answers `GET /metrics` too.
 */
async function metricsPlugin(
  app: FastifyInstance,
  opts: { metrics: Metrics; serve: boolean; token: string | null },
) {
  const { metrics } = opts;
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp({
      method: request.method,
      route: request.is404 ? 'not_found' : (request.routeOptions.url ?? 'not_found'),
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });
  if (opts.serve) metricsRoute(app, { metrics, token: opts.token });
}

/** Not encapsulated: its response hook observes every route of the app. */
export const metricsRoutes = fp(metricsPlugin, { name: 'atelier-metrics' });

/**
 * `GET /metrics` in the Prometheus text format, behind `Authorization: Bearer <token>` when a
 * token is configured (METRICS_TOKEN). Used by the main app, or alone on METRICS_PORT.
 */
export function metricsRoute(
  app: FastifyInstance,
  opts: { metrics: Metrics; token: string | null },
): void {
  const { metrics, token } = opts;
  app.get('/metrics', async (request, reply) => {
    if (token !== null && !bearerMatches(request, token)) return refuse(request, reply);
    const text = await metrics.render();
    return reply
      .header('content-type', metrics.contentType)
      .header('cache-control', 'no-store')
      .send(text);
  });
}

/**
 * Whether `request` may read what `/metrics` shows on this listener: `/metrics` is served here
 * (not on METRICS_PORT) and, when METRICS_TOKEN is set, the request carries it. `/readyz`
 * shows its backend detail (model servers' origins) on the same terms.
 */
export function mayReadMetrics(
  request: FastifyRequest,
  opts: { serve: boolean; token: string | null },
): boolean {
  return opts.serve && (opts.token === null || bearerMatches(request, opts.token));
}

/** Compared as hashes, so neither the token's content nor its length shows in the timing. */
function bearerMatches(request: FastifyRequest, token: string): boolean {
  const given = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
  return given !== undefined && constantTimeEqual(sha256Hex(given), sha256Hex(token));
}

function refuse(request: FastifyRequest, reply: FastifyReply) {
  reply.header('www-authenticate', 'Bearer realm="metrics"').header('cache-control', 'no-store');
  const message = 'Send Authorization: Bearer with the METRICS_TOKEN of this server.';
  return sendAppError(request, reply, new AppError(ErrorCode.Unauthenticated, message));
}
