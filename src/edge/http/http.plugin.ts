import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { OutageLog } from '../../observability/outage-log.ts';
import { databaseUnavailable, outageError } from '../../services/database-outage.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import type { Services } from '../services.ts';
import { sendAppError } from './error-reply.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Expected faults (the database away), logged once and then counted. */
    outages: OutageLog;
  }
}

/** Two years, the preload list's own minimum being one (https://hstspreload.org). */
const hstsMaxAgeSeconds = 63_072_000;

/**
 * What every route shares: the request id echoed back, conservative headers, errors that never
 * leak internals, and the health endpoints (`/healthz` alive, `/readyz` ready to serve).
 *
 * Every response is never framed, never sniffed and sends no referrer; its content policy
 * allows nothing (a downloaded SVG cannot run script), which pages replace with their own
 * (`edge/ui/html.ts`). HSTS is sent when the public URL is https: TLS ends at a proxy in front,
 * and the browser sees the public URL, not this listener.
 */
async function http(
  app: FastifyInstance,
  opts: {
    services: Services;
    https: boolean;
    /** Whether a request may see `/readyz`'s backends (their origins): as `/metrics`. */
    showBackends: (request: FastifyRequest) => boolean;
  },
) {
  const outages = new OutageLog(app.log);
  app.decorate('outages', outages);
  app.addHook('onClose', async () => outages.close());

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    if (opts.https)
      reply.header('strict-transport-security', `max-age=${hstsMaxAgeSeconds}; includeSubDomains`);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A domain error a route let through (a credential check with the database away, …):
    // its catalogue status and body; the cause, if any, to the log only.
    const refused = error instanceof AppError ? error : outageError(error);
    if (refused !== null) {
      if (refused.code === ErrorCode.IdentityUnavailable) {
        outages.report(databaseUnavailable, refused.cause, { reqId: request.id });
        reply.header('retry-after', 1);
      } else if (refused.cause !== undefined) {
        request.log.warn({ err: refused.cause, code: refused.code }, 'request refused');
      }
      return sendAppError(request, reply, refused);
    }
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'unhandled error');
      return sendAppError(request, reply, new AppError(ErrorCode.Internal, 'Internal error'));
    }
    // Fastify's own refusals (a body that does not parse, too large, of an unknown type) keep
    // the status RFC 9110 names for them (400, 413, 415) in the catalogue's shape.
    const code = status === 429 ? ErrorCode.RateLimited : ErrorCode.InvalidInput;
    return sendAppError(request, reply, new AppError(code, error.message), status);
  });

  // Fastify's own 404 logs and answers "Route GET:<url> not found" with the query string, which
  // on a signed path is a credential (a preflight to an upload URL, a typo in a media URL).
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0];
    return sendAppError(
      request,
      reply,
      new AppError(ErrorCode.NotFound, `No route ${request.method} ${path}.`),
    );
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  // Model servers' addresses (an internal GPU box) are for operators: the backend detail is
  // shown only to who may read /metrics, which has the same numbers.
  app.get('/readyz', async (request, reply) => {
    const ready = await opts.services.ready();
    const detail = opts.showBackends(request);
    const backends = detail ? opts.services.backends() : [];
    // A pool's state is read from the database: with the database away, there is none to show.
    const pools = detail && ready ? await opts.services.pools() : [];
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not ready',
      ...(backends.length > 0 ? { backends } : {}),
      ...(pools.length > 0 ? { pools } : {}),
    });
  });
}

/** Not encapsulated: its hooks and error handler apply to every route of the app. */
export const httpPlugin = fp(http, { name: 'atelier-http' });
