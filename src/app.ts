import path from 'node:path';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { ApiKeyVerifier } from './auth/api-key-verifier.ts';
import { GraphqlAuthenticator } from './auth/authenticate.ts';
import { BuiltinIdentityProvider } from './auth/builtin-idp.ts';
import { OidcIdTokenAuthenticator } from './auth/id-token-authenticator.ts';
import { IdTokenVerifier } from './auth/id-token-verifier.ts';
import { remoteIssuerKeys } from './auth/issuer-keys.ts';
import { AccessTokens } from './auth/oauth/access-tokens.ts';
import { AuthorizationFlow } from './auth/oauth/authorization-flow.ts';
import { BrowserSessions } from './auth/oauth/browser-sessions.ts';
import {
  ClientMetadataDocuments,
  type MetadataFetchOptions,
} from './auth/oauth/client-metadata-documents.ts';
import { ClientRegistry } from './auth/oauth/clients.ts';
import { TokenEndpoint } from './auth/oauth/token-endpoint.ts';
import { SigningKeys } from './auth/signing-keys.ts';
import type { Config } from './config/config.ts';
import { builtinElements, builtinModels } from './domain/builtin-catalogue.ts';
import type { ModelDefinition } from './domain/model.ts';
import { graphqlPlugin } from './edge/graphql/graphql.plugin.ts';
import { graphqlOperationMetrics } from './edge/graphql/graphql-metrics.ts';
import { buildGraphqlSchema } from './edge/graphql/schema.ts';
import { httpPlugin } from './edge/http/http.plugin.ts';
import { idpRoutes } from './edge/http/idp.routes.ts';
import { mediaRoutes } from './edge/http/media.route.ts';
import { metricsRoutes } from './edge/http/metrics.route.ts';
import { rateLimitsPlugin } from './edge/http/rate-limits.ts';
import { requestIdOf } from './edge/http/request-id.ts';
import { uploadRoutes } from './edge/http/upload.route.ts';
import { mcpRoutes } from './edge/mcp/mcp.route.ts';
import { oauthRoutes } from './edge/oauth/oauth.routes.ts';
import type { Services } from './edge/services.ts';
import { consentPage } from './edge/ui/consent.page.ts';
import { loginPage } from './edge/ui/login.page.ts';
import { attachGraphqlWebSocket, type WebSocketLimits } from './edge/ws/graphql-ws.server.ts';
import { Ffmpeg } from './engines/media/ffmpeg.ts';
import { builtinEngineNames, builtinEngines } from './engines/registry.ts';
import { listEspeakVoices } from './engines/speech/espeak.ts';
import { renderVoicePreview } from './engines/speech/voice-preview.ts';
import { PostgresTaskEvents } from './events/postgres-task-events.ts';
import { LocalTaskEvents, type TaskEvents } from './events/task-events.ts';
import type { EngineInputs } from './jobs/engine-request.ts';
import { TaskRunner } from './jobs/task-runner.ts';
import { type Metrics, PrometheusMetrics } from './observability/metrics.ts';
import { AccountService } from './services/account.service.ts';
import { ApiKeyService } from './services/api-key.service.ts';
import { CatalogueService } from './services/catalogue.service.ts';
import { GenerationService } from './services/generation.service.ts';
import { LibraryService } from './services/library.service.ts';
import { McpConnectionService } from './services/mcp-connection.service.ts';
import { MediaService } from './services/media.service.ts';
import { DatabaseRateLimitWindows, type SharedWindows } from './services/rate-limit-windows.ts';
import { ResultService } from './services/result.service.ts';
import { type ReadyMedia, UploadService } from './services/upload.service.ts';
import { VoiceService } from './services/voice.service.ts';
import { type Clock, systemClock } from './shared/clock.ts';
import type { Logger } from './shared/logger.ts';
import { every } from './shared/periodic.ts';
import { LocalMediaStorage } from './storage/media-storage.ts';
import { S3MediaStorage } from './storage/s3-media-storage.ts';
import { UrlSigner } from './storage/url-signer.ts';
import { type Database, type DatabaseLocation, openDatabase } from './store/database.ts';
import { migrateToLatest, pendingMigrations } from './store/migrator.ts';
import { findPendingAuthorization } from './store/oauth.store.ts';
import { RedisRateLimitWindows } from './store/redis-rate-limit.store.ts';
import { sharedSecret } from './store/secret.store.ts';
import { queueDepth } from './store/task-queue.store.ts';

/** How often workers look for expired uploads to complete or forget. */
const uploadSweepMs = 60_000; // 1 minute

/** Things a caller may provide instead of the defaults (tests share a database, move time). */
export interface AppOverrides {
  /** An open, migrated database the app uses but does not close. */
  database?: Database;
  clock?: Clock;
  /** Where logs go (default: stdout). */
  logStream?: DestinationStream;
  /** Limits of the GraphQL WebSocket (the benchmark raises them). */
  webSocketLimits?: Partial<WebSocketLimits>;
  /** Tests only: let CIMD fetches reach a local HTTPS server. */
  cimdFetch?: Pick<MetadataFetchOptions, 'allowPrivateAddresses' | 'ca'>;
}

/** The authorization server for MCP clients, transport-free. */
export interface OauthServer {
  readonly clients: ClientRegistry;
  readonly sessions: BrowserSessions;
  readonly flow: AuthorizationFlow;
  readonly tokens: AccessTokens;
  readonly tokenEndpoint: TokenEndpoint;
  readonly keys: SigningKeys;
  readonly idTokens: OidcIdTokenAuthenticator;
}

/** The wired core without HTTP: what `serve`, `worker` and the operator commands share. */
export interface Core {
  readonly config: Config;
  readonly database: Database;
  readonly services: Services;
  readonly oauth: OauthServer;
  readonly events: TaskEvents;
  /** This instance's metrics (`GET /metrics`); queue gauges read the database at scrape time. */
  readonly metrics: Metrics;
  /** Starts `concurrency` task slots in this process; `close()` drains them. */
  startWorkers(log: Logger, concurrency?: number): TaskRunner;
  close(): Promise<void>;
}

export function databaseLocation(config: Config): DatabaseLocation {
  return config.databaseUrl === undefined
    ? { backend: 'pglite', dataDir: config.dataDir }
    : { backend: 'postgres', url: config.databaseUrl };
}

/** Built-in models, with configured ones added or replacing them by modelId. */
export function catalogueModels(config: Config): ModelDefinition[] {
  const models = new Map(builtinModels.map((m) => [m.modelId, m]));
  for (const model of config.models) models.set(model.modelId, model);
  const unknown = [...models.values()].filter((m) => !builtinEngineNames.includes(m.engine));
  if (unknown.length > 0) {
    throw new Error(
      `Models name engines that do not exist: ${unknown.map((m) => `${m.modelId} → ${m.engine}`).join(', ')}. ` +
        `Engines: ${builtinEngineNames.join(', ')}.`,
    );
  }
  return [...models.values()];
}

/** Opens (or adopts) the database, applies migrations and builds every service. */
export async function buildCore(config: Config, overrides: AppOverrides = {}): Promise<Core> {
  const models = catalogueModels(config);
  const owned = overrides.database === undefined;
  const database = overrides.database ?? (await openDatabase(databaseLocation(config)));
  const closers: Array<() => Promise<void>> = [];
  if (owned) closers.push(() => database.close());
  const closeAll = async () => {
    for (const close of closers.reverse()) await close();
  };
  try {
    if (owned) await migrateToLatest(database.db);
    const db = database.db;
    const clock = overrides.clock ?? systemClock;
    const metrics = new PrometheusMetrics({ queue: () => queueDepth(db) });
    const events: TaskEvents =
      database.connectionUrl === null
        ? new LocalTaskEvents()
        : await PostgresTaskEvents.connect(database.connectionUrl);
    closers.push(() => events.close());
    const signer = new UrlSigner({
      key: await sharedSecret(db, 'media-url-signing'),
      publicUrl: config.publicUrl,
      clock,
      ttlMs: config.mediaUrlTtlMs,
    });
    const storage =
      config.mediaStore.kind === 's3'
        ? new S3MediaStorage(config.mediaStore.s3)
        : new LocalMediaStorage(path.join(config.dataDir, 'files'));
    if (storage instanceof S3MediaStorage) closers.push(async () => storage.close());
    const verifier = new ApiKeyVerifier({ db, clock });
    const { identity } = config;
    const identityProvider = identity.builtin
      ? await BuiltinIdentityProvider.open({
          db,
          clock,
          issuer: identity.issuer,
          audience: identity.audience,
        })
      : null;
    const idTokens = new OidcIdTokenAuthenticator({
      db,
      createAccounts: identity.createAccounts,
      verifier: new IdTokenVerifier({
        issuer: identity.issuer,
        audience: identity.audience,
        algorithms: identity.algorithms,
        keys:
          identityProvider === null
            ? remoteIssuerKeys({
                issuer: identity.issuer,
                jwksUri: identity.jwksUri,
                cooldownMs: identity.jwksRefreshFloorMs,
              })
            : identityProvider.verificationKeys(),
      }),
    });
    const catalogue = new CatalogueService({ models, elements: builtinElements });
    const ffmpeg = Ffmpeg.resolve({ ffmpeg: config.ffmpegPath, ffprobe: config.ffprobePath });
    const voices = new VoiceService({ listVoices: listEspeakVoices });
    const uploads = new UploadService({
      db,
      signer,
      storage,
      ffmpeg,
      clock,
      limits: config.uploads,
      direct: config.mediaStore.kind === 's3' && config.mediaStore.s3.directUploads,
    });
    const readyMedia: ReadyMedia = (accountId, ids, field) =>
      uploads.readyMedia(accountId, ids, field);
    const library = new LibraryService({
      db,
      storage,
      clock,
      voices,
      readyMedia,
      publicElements: builtinElements,
      maxElementsPerAccount: 500,
    });
    // Access tokens live 7 days; a retired key stays published 8.
    const oauthKeys = await SigningKeys.open(db, 'oauth-signing-keys', 8 * 86_400_000);
    const { cimdHosts } = config.oauth;
    const documents =
      cimdHosts === '*' || cimdHosts.length > 0
        ? new ClientMetadataDocuments({ allowedHosts: cimdHosts, ...overrides.cimdFetch })
        : null;
    const clients = new ClientRegistry(config.oauth.clients, documents);
    const sessions = new BrowserSessions(db);
    const scope = 'mcp:access';
    const { issuer, resource } = config.oauth;
    const tokens = new AccessTokens({ db, keys: oauthKeys, issuer, resource, scope, clock });
    const oauth: OauthServer = {
      clients,
      sessions,
      keys: oauthKeys,
      idTokens,
      tokens,
      flow: new AuthorizationFlow({ db, clients, sessions, issuer, resource, scope }),
      tokenEndpoint: new TokenEndpoint({ db, clients, tokens, resource }),
    };
    const services: Services = {
      graphqlAuth: new GraphqlAuthenticator({ db, apiKeys: verifier, idTokens }),
      identityProvider,
      accounts: new AccountService({ db, clock, credentialCache: verifier, metrics }),
      apiKeys: new ApiKeyService({ db, clock, verifier }),
      catalogue,
      library,
      voices,
      uploads,
      generations: new GenerationService({
        db,
        catalogue,
        library,
        voices,
        events,
        creditOrder: config.creditCategories,
        maxAttempts: config.taskMaxAttempts,
        metrics,
      }),
      results: new ResultService({
        db,
        events,
        signer,
        maxRunningPerAccount: config.accountMaxRunningTasks,
      }),
      media: new MediaService({
        db,
        signer,
        storage,
        voices,
        readyMedia,
        renderPreview: (voice) => renderVoicePreview(ffmpeg, voice),
      }),
      mcpConnections: new McpConnectionService({ db, serverUrl: config.oauth.resource }),
      ready: async () => (await database.ping()) && (await pendingMigrations(db)).length === 0,
    };
    const inputs: EngineInputs = {
      elementPictures: (ids) => library.elementPictures(ids),
      mediaBytes: (mediaId) => library.mediaBytes(mediaId),
      engineVoice: async (voiceModelId) => (await voices.get(voiceModelId)).engineVoice,
      avatarPortrait: (accountId, avatarId) => library.avatarPortrait(accountId, avatarId),
    };
    const engines = builtinEngines(ffmpeg);
    return {
      config,
      database,
      services,
      oauth,
      events,
      metrics,
      startWorkers(log, concurrency = config.workerConcurrency) {
        const runner = new TaskRunner({
          db,
          events,
          storage,
          engines,
          model: (modelId) => models.find((m) => m.modelId === modelId),
          inputs,
          log,
          concurrency,
          leaseMs: config.taskLeaseMs,
          pollMs: config.taskPollMs,
          maxRunningPerAccount: config.accountMaxRunningTasks,
          metrics,
        });
        runner.start();
        // Drain before the events and the database close (closers run in reverse).
        closers.push(() => runner.stop(config.shutdownDrainMs));
        const sweeper = every(uploadSweepMs, async () => {
          await uploads.sweepExpired(log);
        });
        closers.push(() => sweeper.stop());
        return runner;
      },
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
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
}

/**
 * The whole service, not yet listening: `main.ts` listens, tests listen on port 0. Task
 * workers run in-process unless `WORKER_CONCURRENCY=0`.
 */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const core = await buildCore(config, overrides);
  const http = Fastify({
    logger: { level: config.logLevel, redact, stream: overrides.logStream ?? process.stdout },
    genReqId: requestIdOf,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    bodyLimit: config.maxBodyBytes,
  });
  http.addHook('onClose', async () => core.close());
  if (config.workerConcurrency > 0) core.startWorkers(http.log);
  await http.register(httpPlugin, {
    services: core.services,
    https: config.publicUrl.startsWith('https:'),
  });
  await http.register(metricsRoutes, { metrics: core.metrics });
  await http.register(rateLimitsPlugin, {
    config: config.rateLimits,
    windows: await sharedWindows(config, core, http),
  });
  const schema = buildGraphqlSchema();
  await http.register(graphqlPlugin, {
    services: core.services,
    schema,
    limits: config.graphqlLimits,
    maxBodyBytes: config.maxBodyBytes,
    mercuriusHooks: graphqlOperationMetrics(core.metrics),
  });
  const webSocket = attachGraphqlWebSocket({
    schema,
    services: core.services,
    log: http.log,
    queryLimits: config.graphqlLimits,
    ...(overrides.webSocketLimits ? { limits: overrides.webSocketLimits } : {}),
  });
  http.server.on('upgrade', (request, socket, head) =>
    webSocket.handleUpgrade(request, socket, head),
  );
  // Sockets close first (1001 Going away), then the core drains and closes.
  http.addHook('preClose', async () => webSocket.close());
  await http.register(mediaRoutes, { services: core.services });
  await http.register(uploadRoutes, { services: core.services });
  await http.register(loginPage, { identity: config.identity, publicUrl: config.publicUrl });
  await http.register(cookie);
  await http.register(formbody);
  await http.register(oauthRoutes, { oauth: config.oauth, ...core.oauth });
  await http.register(mcpRoutes, {
    services: core.services,
    tokens: core.oauth.tokens,
    publicUrl: config.publicUrl,
    version: '0.1.0',
  });
  await http.register(consentPage, {
    oauth: config.oauth,
    sessions: core.oauth.sessions,
    pendingRedirect: async (sessionHash) =>
      (await findPendingAuthorization(core.database.db, sessionHash))?.redirect_uri ?? null,
  });
  if (core.services.identityProvider !== null) {
    await http.register(idpRoutes, {
      idp: core.services.identityProvider,
      signInLimit: config.signInLimit,
    });
  }
  await http.ready();
  return { ...core, http, close: () => http.close() };
}

/** Where every node counts rate limits: null when each node counts alone, in memory. */
async function sharedWindows(
  config: Config,
  core: Core,
  http: FastifyInstance,
): Promise<SharedWindows | null> {
  const { store } = config.rateLimits;
  if (store === 'database') return new DatabaseRateLimitWindows(core.database.db);
  if (store !== 'redis' || config.redis === null) return null;
  const redis = await RedisRateLimitWindows.connect(config.redis, http.log);
  http.addHook('onClose', async () => redis.close());
  return redis;
}

/** `TRUST_PROXY` as Fastify takes it: a hop count becomes "trust the nearest n hops". */
function fastifyTrustProxy(
  trust: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return typeof trust === 'boolean' ? trust : [...trust];
}
