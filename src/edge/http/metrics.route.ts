import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../../observability/metrics.ts';

/**
 * `GET /metrics` in the Prometheus text format, and the HTTP histogram behind it: every
 * response of the app is observed under its route pattern (`/media/:mediaId`), never the raw
 * URL, so label values stay few; a request no route matched counts as `not_found`.
 */
async function metricsPlugin(app: FastifyInstance, opts: { metrics: Metrics }) {
  const { metrics } = opts;
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp({
      method: request.method,
      route: request.is404 ? 'not_found' : (request.routeOptions.url ?? 'not_found'),
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await metrics.render();
    return reply
      .header('content-type', metrics.contentType)
      .header('cache-control', 'no-store')
      .send(text);
  });
}

/** Not encapsulated: its response hook observes every route of the app. */
export const metricsRoutes = fp(metricsPlugin, { name: 'atelier-metrics' });
