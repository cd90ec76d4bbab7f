import type { IncomingMessage } from 'node:http';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import proxyAddr from '@fastify/proxy-addr';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config/config.ts';
import { buildCore, type Core, type CoreOverrides } from './core.ts';
import { graphqlPlugin } from './edge/graphql/graphql.plugin.ts';
import { graphqlOperationMetrics } from './edge/graphql/graphql-metrics.ts';
import { buildGraphqlSchema } from './edge/graphql/schema.ts';
import { httpPlugin } from './edge/http/http.plugin.ts';
import { idpRoutes } from './edge/http/idp.routes.ts';
import { mediaRoutes } from './edge/http/media.route.ts';
import { mayReadMetrics, metricsRoute, metricsRoutes } from './edge/http/metrics.route.ts';
import { rateLimitsPlugin } from './edge/http/rate-limits.ts';
import { requestIdOf } from './edge/http/request-id.ts';
import { serializeRequest } from './edge/http/request-log.ts';
import { traceGraphqlOperations, traceRequests } from './edge/http/request-tracing.ts';
import { textInputHook } from './edge/http/text-input.plugin.ts';
import { uploadRoutes } from './edge/http/upload.route.ts';
import { usageRoutes } from './edge/http/usage.route.ts';
import { McpCancellations } from './edge/mcp/cancellations.ts';
import { mcpRoutes } from './edge/mcp/mcp.route.ts';
import { oauthRoutes } from './edge/oauth/oauth.routes.ts';
import { openaiRoutes } from './edge/openai/openai.routes.ts';
import { assetRoutes } from './edge/ui/assets.ts';
import { consentPage } from './edge/ui/consent.page.ts';
import { consolePage } from './edge/ui/console.page.ts';
import { loginPage } from './edge/ui/login.page.ts';
import { attachGraphqlWebSocket, type WebSocketLimits } from './edge/ws/graphql-ws.server.ts';
import {
  DatabaseRateLimitWindows,
  MemoryRateLimitWindows,
  type RateLimitWindows,
} from './rate-limits/rate-limit-windows.ts';
import { SignInThrottle } from './rate-limits/sign-in-throttle.ts';
import { systemClock } from './shared/clock.ts';
import { every } from './shared/periodic.ts';

/** How often each API node deletes expired sessions, pending authorizations and codes. */
const oauthSweepMs = 5 * 60_000; // 5 minutes

/** What the app takes beyond the core's overrides. */
export interface AppOverrides extends CoreOverrides {
  /** Where logs go (default: stdout). */
  logStream?: DestinationStream;
  /** Limits of the GraphQL WebSocket (the benchmark raises them). */
  webSocketLimits?: Partial<WebSocketLimits>;
  /** How a slowed sign-in waits (tests record the pause instead of sleeping through it). */
  signInPause?: (ms: number) => Promise<unknown>;
}

/** Secrets never reach the log, whatever a later change decides to log (DESIGN.md rule 6). */
const redact = [
  'req.headers.authorization',
  'req.headers["x-idp-token"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.secret',
  '*.password',
  '*.idToken',
  '*.id_token',
  '*.apiKey',
];

export interface App extends Core {
  readonly http: FastifyInstance;
  /** `GET /metrics` alone, for METRICS_HOST:METRICS_PORT; null when it is on the main port. */
  readonly metricsHttp: FastifyInstance | null;
}

/**
 * The whole service, not yet listening: `main.ts` listens, tests listen on port 0. Task
 * workers run in-process unless `WORKER_CONCURRENCY=0`.
 */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const core = await buildCore(config, overrides, 'server');
  const http = Fastify({
    logger: {
      level: config.logLevel,
      redact,
      // Request URLs lose their signed query strings and access tokens (request-log.ts).
      serializers: { req: serializeRequest },
      stream: overrides.logStream ?? process.stdout,
    },
    genReqId: requestIdOf,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    bodyLimit: config.maxBodyBytes,
  });
  http.addHook('onClose', async () => core.close());
  // Before any route, so every request has its span; not at all when tracing is off.
  if (config.tracing !== null) traceRequests(http);
  let metricsHttp: FastifyInstance | null = null;
  try {
    if (config.workerConcurrency > 0) core.startWorkers(http.log);
    const { metrics } = config;
    const metricsHere = { serve: metrics.port === null, token: metrics.token };
    await http.register(httpPlugin, {
      services: core.services,
      https: config.publicUrl.startsWith('https:'),
      showBackends: (request) => mayReadMetrics(request, metricsHere),
    });
    await http.register(textInputHook);
    await http.register(metricsRoutes, {
      metrics: core.metrics,
      serve: metrics.port === null,
      token: metrics.token,
    });
    if (metrics.port !== null) {
      metricsHttp = Fastify({ loggerInstance: http.log, genReqId: requestIdOf });
      metricsRoute(metricsHttp, { metrics: core.metrics, token: metrics.token });
      const own = metricsHttp;
      http.addHook('onClose', async () => own.close());
      await metricsHttp.ready();
    }
    const windows = await rateLimitWindows(config, core, http, overrides);
    await http.register(rateLimitsPlugin, { config: config.rateLimits, windows });
    const schema = buildGraphqlSchema();
    await http.register(graphqlPlugin, {
      services: core.services,
      schema,
      limits: config.graphqlLimits,
      maxBodyBytes: config.maxBodyBytes,
      mercuriusHooks: (graphql) => {
        graphqlOperationMetrics(core.metrics)(graphql);
        if (config.tracing !== null) traceGraphqlOperations(graphql);
      },
    });
    const webSocket = attachGraphqlWebSocket({
      schema,
      services: core.services,
      log: http.log,
      outages: http.outages,
      queryLimits: config.graphqlLimits,
      countOperations: (caller, hits) => http.limits.operations('graphql', caller, hits),
      clientAddress: clientAddressBehind(config.trustProxy),
      ...(overrides.webSocketLimits ? { limits: overrides.webSocketLimits } : {}),
    });
    http.server.on('upgrade', (request, socket, head) =>
      webSocket.handleUpgrade(request, socket, head),
    );
    // Sockets close first (1001 Going away), then the core drains and closes.
    http.addHook('preClose', async () => webSocket.close());
    await http.register(mediaRoutes, { services: core.services });
    await http.register(uploadRoutes, { services: core.services });
    await http.register(usageRoutes, { services: core.services });
    await http.register(assetRoutes);
    await http.register(loginPage, { identity: config.identity, publicUrl: config.publicUrl });
    await http.register(consolePage, {
      services: core.services,
      identity: config.identity,
      publicUrl: config.publicUrl,
      mediaStore: config.mediaStore,
    });
    await http.register(cookie);
    await http.register(formbody);
    await http.register(oauthRoutes, { oauth: config.oauth, ...core.oauth });
    const sweeper = every(oauthSweepMs, async () => {
      try {
        const deleted = await core.oauth.sessions.sweepExpired();
        http.log.debug({ deleted }, 'expired sign-in state swept');
      } catch (error) {
        http.log.warn(
          { err: error },
          'expired sign-in state could not be swept; trying again later',
        );
      }
    });
    http.addHook('onClose', async () => sweeper.stop());
    await http.register(mcpRoutes, {
      services: core.services,
      tokens: core.oauth.tokens,
      publicUrl: config.publicUrl,
      allowedOrigins: config.mcpAllowedOrigins,
      version: '0.1.0',
      cancellations: new McpCancellations(core.mcpCancellations),
    });
    await http.register(openaiRoutes, {
      prefix: '/v1',
      services: core.services,
      waitMs: config.openaiWaitMs,
    });
    await http.register(consentPage, {
      oauth: config.oauth,
      sessions: core.oauth.sessions,
      flow: core.oauth.flow,
    });
    if (core.services.identityProvider !== null) {
      await http.register(idpRoutes, {
        idp: core.services.identityProvider,
        throttle: new SignInThrottle({
          windows,
          maxFailures: config.signInLimit,
          ...(overrides.signInPause ? { pause: overrides.signInPause } : {}),
        }),
      });
    }
    await http.ready();
  } catch (error) {
    // A half-built app closes what it opened (the core, Redis) before the error goes up.
    await http.close().catch(() => {});
    throw error;
  }
  return { ...core, http, metricsHttp, close: () => http.close() };
}

/** Where rate limits are counted: in memory when each node counts alone, else shared. */
async function rateLimitWindows(
  config: Config,
  core: Core,
  http: FastifyInstance,
  overrides: AppOverrides,
): Promise<RateLimitWindows> {
  const { store } = config.rateLimits;
  if (store === 'database')
    return new DatabaseRateLimitWindows(core.database.db, overrides.clock ?? systemClock);
  if (store !== 'redis' || config.redis === null)
    return new MemoryRateLimitWindows(overrides.clock ?? systemClock);
  // ioredis (about 20 MiB resident) is loaded only when Redis counts the limits.
  const { RedisRateLimitWindows } = await import('./rate-limits/redis-rate-limit-windows.ts');
  const redis = await RedisRateLimitWindows.connect(config.redis, http.log);
  http.addHook('onClose', async () => redis.close());
  return redis;
}

/** A raw request's client address by `TRUST_PROXY`, as Fastify gives `request.ip`. */
function clientAddressBehind(trust: Config['trustProxy']): (request: IncomingMessage) => string {
  const rule = fastifyTrustProxy(trust);
  const trusted =
    typeof rule === 'function'
      ? rule
      : typeof rule === 'boolean'
        ? () => rule
        : proxyAddr.compile(rule);
  return (request) => proxyAddr(request, trusted);
}

/** `TRUST_PROXY` as Fastify takes it: a hop count becomes "trust the nearest n hops". */
function fastifyTrustProxy(
  trust: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return typeof trust === 'boolean' ? trust : [...trust];
}
