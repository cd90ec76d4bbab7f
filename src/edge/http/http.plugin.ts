import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorCode } from '../../shared/errors.ts';
import type { Services } from '../services.ts';

/**
 * What every route shares: the request id echoed back, conservative headers, errors that never
 * leak internals, and the health endpoints (`/healthz` alive, `/readyz` ready to serve).
 */
async function http(app: FastifyInstance, opts: { services: Services }) {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
  });

  app.setErrorHandler((error: FastifyError & { error?: { code?: unknown } }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'unhandled error');
      return reply.code(500).send({
        error: { code: ErrorCode.Internal, message: 'Internal error', requestId: request.id },
      });
    }
    // A body already in our shape (the rate limiter's): send it as it is.
    if (typeof error.error?.code === 'string')
      return reply.code(status).send({ error: error.error });
    const code = status === 429 ? ErrorCode.RateLimited : ErrorCode.InvalidInput;
    return reply
      .code(status)
      .send({ error: { code, message: error.message, requestId: request.id } });
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const ready = await opts.services.ready();
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready' });
  });
}

/** Not encapsulated: its hooks and error handler apply to every route of the app. */
export const httpPlugin = fp(http, { name: 'atelier-http' });
