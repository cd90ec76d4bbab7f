import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RateLimitConfig } from '../../config/deployment.ts';
import type { RateLimitWindows } from '../../rate-limits/rate-limit-windows.ts';
import { clientAddressKey } from '../../shared/client-address.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { sendAppError } from './error-reply.ts';
import { httpStatusOf } from './error-status.ts';

/** A hook that counts the request against its key and answers 429 when over the limit. */
export type RateLimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** Why an operation counted outside an HTTP request was refused. */
export interface RateLimitRefusal {
  readonly message: string;
  readonly retryAfterSeconds: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The hooks of the limits routes add (`onRequest`, or `preHandler` after authentication). */
    readonly limits: {
      /**
       * /graphql and /mcp: `key` names the caller (an account, a token), or null for its IP.
       * `weight` is how many hits the request is (a document submitting several generations).
       */
      api(
        area: string,
        key: (request: FastifyRequest) => string | null,
        shape?: RefusalShape,
        weight?: (request: FastifyRequest) => number,
      ): RateLimitHook;
      /**
       * Counts `hits` operations in the same window as `api(area)` for the caller `key`, outside
       * an HTTP request (an operation on a WebSocket): a refusal when over the limit, else null.
       */
      operations(area: string, key: string, hits: number): Promise<RateLimitRefusal | null>;
      /** Sign-in and token routes, per IP. */
      auth(area: string): RateLimitHook;
    };
  }
}

/** One count in one window, as the answer's headers describe it. */
export interface LimitState {
  readonly max: number;
  readonly remaining: number;
  readonly resetSeconds: number;
}

interface Count extends LimitState {
  readonly exceeded: boolean;
}

/**
 * Request limits in fixed windows, counted in memory on one node, or in PostgreSQL or Redis
 * when several share the count (`RATE_LIMIT_STORE`). A request may weigh more than one hit (a
 * document with several `generate*` fields), which is why the windows are counted here rather
 * than by `@fastify/rate-limit`, whose stores only add one. Answers carry the IETF draft's
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers; a refusal is `429`
 * with `Retry-After` and code 150029 (GraphQL-shaped on /graphql). If the count cannot be read
 * (the database or Redis is down), the request goes on: the limiter never turns an outage into
 * refusals of its own.
 */
async function limitsPlugin(
  app: FastifyInstance,
  opts: { config: RateLimitConfig; windows: RateLimitWindows },
) {
  const { config, windows } = opts;

  /** The count after `hits` more, or null when the store could not count (fail open). */
  const count = async (
    key: string,
    max: number,
    windowMs: number,
    hits: number,
  ): Promise<Count | null> => {
    try {
      const window = await windows.hit(key, windowMs, hits);
      return {
        max,
        remaining: Math.max(0, max - window.hits),
        resetSeconds: Math.ceil(window.ttlMs / 1000),
        exceeded: window.hits > max,
      };
    } catch {
      return null; // Redis reports its outage itself, once; the database's shows in /readyz.
    }
  };

  const hook = (
    max: number,
    windowMs: number,
    key: (request: FastifyRequest) => string,
    per: string,
    shape?: RefusalShape,
    weight?: (request: FastifyRequest) => number,
  ): RateLimitHook => {
    if (max === 0) return async () => {};
    return async (request, reply) => {
      const state = await count(key(request), max, windowMs, weight?.(request) ?? 1);
      if (state === null) return;
      describeLimit(reply, state);
      if (!state.exceeded) return;
      const limit = `${max} ${per} per ${windowMs / 1000} s`;
      return sendRateLimited(request, reply, state.resetSeconds, limit, shape);
    };
  };

  app.decorate('limits', {
    api: (area, key, shape, weight) =>
      hook(
        config.api,
        config.windowMs,
        (request) => `${area}:${key(request) ?? `ip:${clientAddressKey(request.ip)}`}`,
        'requests',
        shape,
        weight,
      ),
    operations: async (area, key, hits) => {
      if (config.api === 0) return null;
      const state = await count(`${area}:${key}`, config.api, config.windowMs, hits);
      if (state === null || !state.exceeded) return null;
      const retryAfterSeconds = Math.max(1, state.resetSeconds);
      const limit = `${config.api} operations per ${config.windowMs / 1000} s`;
      return {
        retryAfterSeconds,
        message: `Rate limited (${limit}); retry in ${retryAfterSeconds} s.`,
      };
    },
    auth: (area) =>
      hook(
        config.auth,
        config.windowMs,
        (request) => `${area}:ip:${clientAddressKey(request.ip)}`,
        'attempts',
      ),
  });
}

/**
 * Writes the RateLimit headers of `state` unless the answer already describes a limit closer
 * to refusing (several limits may apply to one request: per IP and per email and IP on sign-in).
 */
export function describeLimit(reply: FastifyReply, state: LimitState): void {
  const written = reply.getHeader('ratelimit-remaining');
  if (written !== undefined && state.remaining > Number(written)) return;
  reply
    .header('ratelimit-limit', state.max)
    .header('ratelimit-remaining', state.remaining)
    .header('ratelimit-reset', state.resetSeconds);
}

/**
 * How a refusal is written: as any HTTP route's error, as a GraphQL response (/graphql), or as
 * /mcp answers before MCP begins (OAuth-style `error` and `error_description`, snake_case like
 * everything an agent reads there).
 */
export type RefusalShape = 'graphql' | 'mcp';

/** A 429 with `Retry-After` and code 150029 naming `limit`, in the route's `shape`. */
export function sendRateLimited(
  request: FastifyRequest,
  reply: FastifyReply,
  resetSeconds: number,
  limit: string,
  shape?: RefusalShape,
): FastifyReply {
  const retryAfterSeconds = Math.max(1, resetSeconds);
  const message = `Rate limited (${limit}); retry in ${retryAfterSeconds} s.`;
  const error = new AppError(ErrorCode.RateLimited, message, { retryAfterSeconds });
  reply.header('retry-after', retryAfterSeconds).header('cache-control', 'no-store');
  if (shape === 'mcp') {
    return reply.code(httpStatusOf[error.code]).send({
      error: 'rate_limited',
      error_description: message,
      code: error.code,
      retryable: true,
      retry_after_seconds: retryAfterSeconds,
      request_id: request.id,
    });
  }
  if (shape !== 'graphql') return sendAppError(request, reply, error);
  const extensions = {
    code: error.code,
    retryAfterSeconds,
    retryable: true,
    requestId: request.id,
  };
  return reply.code(httpStatusOf[error.code]).send({ errors: [{ message, extensions }] });
}

/** A short stable name for a bearer token, so the token itself is never a key. */
export function tokenKey(token: string): string {
  return `token:${createHash('sha256').update(token).digest('base64url').slice(0, 22)}`;
}

/** Not encapsulated: every route may use `app.limits`. */
export const rateLimitsPlugin = fp(limitsPlugin, { name: 'atelier-rate-limits' });
