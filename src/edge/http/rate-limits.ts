import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RateLimitConfig } from '../../config/deployment.ts';
import type { SharedWindows } from '../../services/rate-limit-windows.ts';
import { ErrorCode } from '../../shared/errors.ts';

/** A hook that counts the request against its key and answers 429 when over the limit. */
export type RateLimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The hooks of the limits routes add (`onRequest`, or `preHandler` after authentication). */
    readonly limits: {
      /** /graphql and /mcp: `key` names the caller (an account, a token), or null for its IP. */
      api(
        area: string,
        key: (request: FastifyRequest) => string | null,
        shape?: 'graphql',
      ): RateLimitHook;
      /** Sign-in and token routes, per IP. */
      auth(area: string): RateLimitHook;
      /** A limit of its own: `max` attempts per `windowMs` for each key (sign-in per email). */
      keyed(
        area: string,
        max: number,
        windowMs: number,
        key: (request: FastifyRequest) => string,
      ): RateLimitHook;
    };
  }
}

/**
 * Request limits counted by `@fastify/rate-limit`: fixed windows in memory on one node, or in
 * PostgreSQL or Redis when several share the count (`RATE_LIMIT_STORE`). Answers carry the
 * IETF draft's `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers; a
 * refusal is `429` with `Retry-After` and code 150029 (GraphQL-shaped on /graphql). If the
 * count cannot be read (the database or Redis is down), the request goes on: the limiter never turns an
 * outage into refusals of its own.
 */
async function limitsPlugin(
  app: FastifyInstance,
  opts: { config: RateLimitConfig; windows: SharedWindows | null },
) {
  const { config, windows } = opts;
  await app.register(rateLimit, {
    global: false,
    skipOnError: true,
    ...(windows === null ? {} : { store: sharedStore(windows) }),
  });

  // `createRateLimit` only counts: several limits may apply to one request (per IP and per
  // email on sign-in), which the plugin's own route hooks do not allow. The headers describe
  // the limit closest to refusing.
  const hook = (
    max: number,
    windowMs: number,
    key: (request: FastifyRequest) => string,
    per: string,
    shape?: 'graphql',
  ): RateLimitHook => {
    if (max === 0) return async () => {};
    const count = app.createRateLimit({ max, timeWindow: windowMs, keyGenerator: key });
    return async (request, reply) => {
      const state = await count(request);
      // Allowed without a count: an allow-list hit, or a store that could not count (the
      // plugin then reports no hits and no window, which no header should claim).
      if (state.isAllowed || state.ttl === 0) return;
      const written = reply.getHeader('ratelimit-remaining');
      if (written === undefined || state.remaining <= Number(written)) {
        reply
          .header('ratelimit-limit', state.max)
          .header('ratelimit-remaining', state.remaining)
          .header('ratelimit-reset', state.ttlInSeconds);
      }
      if (!state.isExceeded) return;
      const retryAfterSeconds = Math.max(1, state.ttlInSeconds);
      return reply
        .code(429)
        .header('retry-after', retryAfterSeconds)
        .header('cache-control', 'no-store')
        .send(refusal(request, retryAfterSeconds, `${max} ${per} per ${windowMs / 1000} s`, shape));
    };
  };

  app.decorate('limits', {
    api: (area, key, shape) =>
      hook(
        config.api,
        config.windowMs,
        (request) => `${area}:${key(request) ?? `ip:${request.ip}`}`,
        'requests',
        shape,
      ),
    auth: (area) =>
      hook(config.auth, config.windowMs, (request) => `${area}:ip:${request.ip}`, 'attempts'),
    keyed: (area, max, windowMs, key) =>
      hook(max, windowMs, (request) => `${area}:${key(request)}`, 'attempts'),
  });
}

/** The body of a 429: code 150029 with the seconds to wait, GraphQL-shaped on /graphql. */
function refusal(
  request: FastifyRequest,
  retryAfterSeconds: number,
  limit: string,
  shape?: 'graphql',
) {
  const message = `Rate limited (${limit}); retry in ${retryAfterSeconds} s.`;
  const details = { code: ErrorCode.RateLimited, retryAfterSeconds, requestId: request.id };
  if (shape === 'graphql')
    return { errors: [{ message, extensions: { ...details, retryable: true } }] };
  return { error: { ...details, message } };
}

/** A `@fastify/rate-limit` store over the shared windows (it constructs stores itself). */
function sharedStore(windows: SharedWindows) {
  return class SharedRateLimitStore {
    incr(
      key: string,
      done: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      windows.hit(key, timeWindow).then(
        (hit) => done(null, { current: hit.hits, ttl: hit.ttlMs }),
        (error: Error) => done(error),
      );
    }

    child(): SharedRateLimitStore {
      return this; // keys already carry their area
    }
  };
}

/** A short stable name for a bearer token, so the token itself is never a key. */
export function tokenKey(token: string): string {
  return `token:${createHash('sha256').update(token).digest('base64url').slice(0, 22)}`;
}

/** Not encapsulated: every route may use `app.limits`. */
export const rateLimitsPlugin = fp(limitsPlugin, { name: 'atelier-rate-limits' });
