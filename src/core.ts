import path from 'node:path';
import { ApiKeyVerifier } from './auth/api-key-verifier.ts';
import { GraphqlAuthenticator } from './auth/authenticate.ts';
import type { ClientMetadataOptions } from './auth/oauth/client-metadata-documents.ts';
import { type OauthServer, openOauthServer } from './auth/oauth/oauth-server.ts';
import { openSignIn } from './auth/sign-in.ts';
import {
  catalogueModels,
  checkCatalogue,
  configuredBackends,
  recordedBackends,
} from './catalogue.ts';
import type { Config } from './config/config.ts';
import { builtinElements } from './domain/builtin-catalogue.ts';
import { configuredVoices } from './domain/configured-voices.ts';
import { creditCategories } from './domain/credits.ts';
import type { Services } from './edge/services.ts';
import { Ffmpeg } from './engines/media/ffmpeg.ts';
import { builtinEngines } from './engines/registry.ts';
import { createRemoteDeps, type RemoteDepsOptions } from './engines/remote/create-remote-deps.ts';
import { measureAudio } from './engines/speech/audio.ts';
import { listEspeakVoices } from './engines/speech/espeak.ts';
import { renderVoicePreview } from './engines/speech/voice-preview.ts';
import {
  type Broadcast,
  LocalBroadcast,
  PostgresBroadcast,
  type Topic,
  topicOf,
} from './events/broadcast.ts';
import { type CredentialEvents, LocalCredentialEvents } from './events/credential-events.ts';
import { PostgresCredentialEvents } from './events/postgres-credential-events.ts';
import { PostgresTaskEvents } from './events/postgres-task-events.ts';
import { LocalTaskEvents, type TaskEvents } from './events/task-events.ts';
import type { BackendHealthService } from './jobs/backend-health.ts';
import type { EngineInputs } from './jobs/engine-request.ts';
import type { TaskRunner } from './jobs/task-runner.ts';
import { startWorkers } from './jobs/workers.ts';
import { BackendHealth } from './observability/backend-health.ts';
import { type Metrics, PrometheusMetrics } from './observability/metrics.ts';
import { poolReports } from './observability/pool-report.ts';
import { tracedCall } from './observability/tracing.ts';
import { AccountService } from './services/account.service.ts';
import { AdminService } from './services/admin.service.ts';
import { ApiKeyService } from './services/api-key.service.ts';
import { AuditService } from './services/audit.service.ts';
import { CatalogueService } from './services/catalogue.service.ts';
import { ContentDeletionService } from './services/content-deletion.service.ts';
import { GenerationService } from './services/generation.service.ts';
import { LibraryService } from './services/library.service.ts';
import { ManagementGuard } from './services/management-guard.ts';
import { McpConnectionService } from './services/mcp-connection.service.ts';
import { MediaService } from './services/media.service.ts';
import { ModelsReloadService, type ModelsSource } from './services/models-reload.service.ts';
import { PoolStatus } from './services/pool-status.ts';
import { ResultService } from './services/result.service.ts';
import { SpendingLimitService } from './services/spending-limit.service.ts';
import { TaskEventFeed } from './services/task-event-feed.ts';
import { TaskFinisher } from './services/task-finisher.ts';
import { TaskUpdates } from './services/task-updates.ts';
import { type ReadyMedia, UploadService } from './services/upload.service.ts';
import { UsageService } from './services/usage.service.ts';
import { VoiceService } from './services/voice.service.ts';
import { WebhookService } from './services/webhook.service.ts';
import { type Clock, systemClock } from './shared/clock.ts';
import { AppError, ErrorCode } from './shared/errors.ts';
import type { Logger } from './shared/logger.ts';
import { Cursors } from './shared/pagination.ts';
import type { AddressCheckOptions } from './shared/public-fetch.ts';
import { SecretBox } from './shared/secret-box.ts';
import { LocalMediaStorage, type MediaStorage } from './storage/media-storage.ts';
import { UrlSigner } from './storage/url-signer.ts';
import { backendStates, syncBackends } from './store/backend.store.ts';
import { recordCatalogue } from './store/catalogue.store.ts';
import { type Database, openDatabase } from './store/database.ts';
import { databaseLocation, migrateUnbounded } from './store/database-location.ts';
import { pendingMigrations } from './store/migrator.ts';
import { sharedSecret } from './store/secret.store.ts';
import { queueDepth } from './store/task-queue.store.ts';

// The wired core without HTTP — database, services, the OAuth server, events, metrics and the
// workers — shared by `serve`, `worker` and the operator commands. With app.ts, the only place
// that constructs concrete things.

/** Things a caller may provide instead of the defaults (tests share a database, move time). */
export interface CoreOverrides {
  /** An open, migrated database the core uses but does not close. */
  database?: Database;
  clock?: Clock;
  /**
   * Tests only: let CIMD fetches reach a local HTTPS server through the address check (test
   * DNS answers, the checked address dialled locally), and size the cache.
   */
  cimdFetch?: Pick<ClientMetadataOptions, 'ca' | 'resolveHost' | 'dialAddress' | 'maxCached'>;
  /** Tests only: the same for the output URLs remote engines fetch from public hosts. */
  remoteFetch?: RemoteDepsOptions['publicNetwork'];
  /** Tests only: the same for webhook deliveries. */
  webhookNetwork?: AddressCheckOptions;
}

/** The wired core without HTTP: what `serve`, `worker` and the operator commands share. */
export interface Core {
  readonly config: Config;
  readonly database: Database;
  readonly services: Services;
  readonly oauth: OauthServer;
  readonly events: TaskEvents;
  /**
   * MCP requests a client cancelled (`notifications/cancelled`), from whichever node heard the
   * notification to the node that runs the request; across processes on PostgreSQL (a topic of
   * the broadcast, which also carries backends taken out of rotation or back).
   */
  readonly mcpCancellations: Topic;
  /** `models reload` and SIGHUP: a new catalogue checked whole, then used on every node. */
  readonly modelsReload: ModelsReloadService;
  /**
   * Follows reloads announced by other nodes: each reads its own `MODELS` through `source`
   * (the configuration read again); a catalogue that does not check out is logged and the
   * old one kept.
   */
  followModelReloads(source: () => ModelsSource, log: Logger): void;
  /** This instance's metrics (`GET /metrics`); queue gauges read the database at scrape time. */
  readonly metrics: Metrics;
  /** Starts `concurrency` task slots in this process; `close()` drains them. */
  startWorkers(log: Logger, concurrency?: number): TaskRunner;
  close(): Promise<void>;
}

/** Topics of the broadcast. */
export const topics = { mcpCancel: 'mcp-cancel', backends: 'backends', models: 'models' } as const;

/**
 * What the process is: a server records the built-in identity provider's issuer on a new data
 * store; a worker or an operator command only reads it (see BuiltinIdentityProvider.open).
 */
export type ProcessRole = 'server' | 'worker' | 'command';

/** Opens (or adopts) the database, applies migrations and builds every service. */
export async function buildCore(
  config: Config,
  overrides: CoreOverrides = {},
  role: ProcessRole = 'command',
): Promise<Core> {
  const ffmpeg = Ffmpeg.resolve({ ffmpeg: config.ffmpegPath, ffprobe: config.ffprobePath });
  const clock = overrides.clock ?? systemClock;
  // Queue gauges read the database at scrape time, once it is open (below).
  const metrics = new PrometheusMetrics({
    queue: () => queueDepth(database.db),
    pools: async () => poolReports(await backendStates(database.db)),
  });
  // Both are replaced by a reload (models-reload.service.ts); closures below read the current.
  const secrets = new Map(config.secrets);
  const remote = createRemoteDeps({
    secrets,
    ffmpeg,
    clock,
    // Called only when an engine runs, by then `health` (below: it lists the models' backends) exists.
    observe: (backend, outcome, ms, status) => {
      metrics.observeBackendCall(backend, outcome, status, ms / 1000);
      health.record(backend, outcome, ms, status);
    },
    traceCall: tracedCall,
    ...(overrides.remoteFetch ? { publicNetwork: overrides.remoteFetch } : {}),
  });
  const engines = builtinEngines(ffmpeg, remote);
  let models = catalogueModels(config, engines);
  const health = new BackendHealth(configuredBackends(models), clock);
  // The SDK is loaded only when tracing is on: off, spans are the API's no-ops and cost nothing.
  const tracing =
    config.tracing !== null && role !== 'command'
      ? (await import('./observability/tracing-sdk.ts')).startTracingSdk(config.tracing, role)
      : null;
  const closers: Array<() => Promise<void>> = [];
  // Closed last (closers run in reverse): the spans of the drain are exported too.
  if (tracing !== null) closers.push(() => tracing.shutdown());
  const owned = overrides.database === undefined;
  const database = overrides.database ?? (await openDatabase(databaseLocation(config)));
  if (owned) closers.push(() => database.close());
  const closeAll = async () => {
    for (const close of closers.reverse()) await close();
  };
  try {
    if (owned) await migrateUnbounded(database, databaseLocation(config));
    const db = database.db;
    const events: TaskEvents =
      database.connectionUrl === null
        ? new LocalTaskEvents()
        : await PostgresTaskEvents.connect(database.connectionUrl);
    closers.push(() => events.close());
    const finisher = new TaskFinisher({ db, events, metrics });
    const credentialEvents: CredentialEvents =
      database.connectionUrl === null
        ? new LocalCredentialEvents()
        : await PostgresCredentialEvents.connect(database.connectionUrl);
    closers.push(() => credentialEvents.close());
    // Servers answer MCP and follow backends; workers announce backends' changes. Operator
    // commands keep the LISTEN connection.
    const broadcast: Broadcast =
      database.connectionUrl === null || role === 'command'
        ? new LocalBroadcast()
        : await PostgresBroadcast.open(database.connectionUrl, 'atelier_broadcast');
    closers.push(() => broadcast.close());
    let backends = recordedBackends(models, engines);
    await syncBackends(
      db,
      models.map((m) => m.modelId),
      backends,
    );
    // What a reload from a process serving nothing compares with (models-reload.service.ts).
    if (role !== 'command') await recordCatalogue(db, models, clock.now());
    const pools = new PoolStatus(db);
    await pools.start(topicOf(broadcast, topics.backends));
    closers.push(async () => pools.close());
    const signer = new UrlSigner({
      key: await sharedSecret(db, 'media-url-signing'),
      publicUrl: config.publicUrl,
      clock,
      ttlMs: config.mediaUrlTtlMs,
    });
    let storage: MediaStorage;
    if (config.mediaStore.kind === 's3') {
      // The AWS SDK (about 30 MiB resident) is loaded only when S3 is configured.
      const { S3MediaStorage } = await import('./storage/s3-media-storage.ts');
      const s3 = new S3MediaStorage(config.mediaStore.s3, undefined, clock);
      closers.push(async () => s3.close());
      storage = s3;
    } else {
      storage = new LocalMediaStorage(path.join(config.dataDir, 'files'));
    }
    const verifier = new ApiKeyVerifier({ db, clock, changes: credentialEvents });
    const { identityProvider, idTokens } = await openSignIn({
      config,
      db,
      clock,
      records: role === 'server',
    });
    const cursors = new Cursors(await sharedSecret(db, 'page-cursors'));
    const catalogue = new CatalogueService({
      models,
      cursors,
      down: (modelId) => pools.isDown(modelId),
      statusSet: (modelId) => pools.statusSet(modelId),
    });
    const voices = new VoiceService({
      listVoices: listEspeakVoices,
      cursors,
      configured: configuredVoices(models),
    });
    const uploads = new UploadService({
      db,
      signer,
      storage,
      probe: { audioDurationMs: (bytes, signal) => measureAudio(ffmpeg, bytes, signal) },
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
      cursors,
    });
    const oauth = await openOauthServer({
      config,
      db,
      clock,
      idTokens,
      ...(overrides.cimdFetch ? { cimdFetch: overrides.cimdFetch } : {}),
    });
    const spending = new SpendingLimitService({ db, clock, catalogue });
    const managers = new ManagementGuard({ db });
    const webhookSecrets = new SecretBox(await sharedSecret(db, 'webhook-secrets'));
    const webhooks = new WebhookService({
      db,
      clock,
      box: webhookSecrets,
      allowLocalhost: config.webhooks.allowLocalhost,
      managers,
    });
    const audit = new AuditService({
      db,
      clock,
      cursors,
      retentionDays: config.auditRetentionDays,
      managers,
    });
    // Started by the first subscription; closed before the events it listens to.
    const feed = new TaskEventFeed({ db, events });
    closers.push(() => feed.close());
    const accounts = new AccountService({
      db,
      clock,
      changes: credentialEvents,
      categories: creditCategories(config.creditCategories, models),
      metrics,
    });
    const apiKeys = new ApiKeyService({ db, clock, changes: credentialEvents, spending, managers });
    const mcpConnections = new McpConnectionService({
      db,
      clock,
      spending,
      managers,
      deployment: { serverUrl: config.oauth.resource, cimdHosts: config.oauth.cimdHosts },
    });
    const services: Services = {
      graphqlAuth: new GraphqlAuthenticator({ db, apiKeys: verifier, idTokens }),
      identityProvider,
      accounts,
      apiKeys,
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
        finisher,
        spending,
        webhooks,
      }),
      results: new ResultService({
        db,
        updates: new TaskUpdates({ db, feed, cursors }),
        signer,
        maxRunningPerAccount: config.accountMaxRunningTasks,
        cursors,
        clock,
      }),
      deletions: new ContentDeletionService({ db, storage, clock }),
      media: new MediaService({
        db,
        signer,
        storage,
        voices,
        readyMedia,
        renderPreview: (voice) => renderVoicePreview(ffmpeg, voice),
      }),
      mcpConnections,
      webhooks,
      audit,
      admin: new AdminService({
        db,
        clock,
        catalogue,
        modelStatuses: {
          refresh: () => pools.refresh(),
          announce: () => broadcast.publish(topics.backends, 'changed'),
        },
        cursors,
        managers,
        accounts,
        apiKeys,
        mcpConnections,
        webhooks,
      }),
      usage: new UsageService({ db, managers }),
      ready: async () => (await database.ping()) && (await pendingMigrations(db)).length === 0,
      backends: () => health.snapshot(),
      pools: async () => poolReports(await backendStates(db)),
    };
    const inputs: EngineInputs = {
      elementPictures: (ids) => library.elementPictures(ids),
      mediaBytes: (mediaId) => library.mediaBytes(mediaId),
      engineVoice: async (voiceModelId) => {
        try {
          return (await voices.get(voiceModelId)).engineVoice;
        } catch (error) {
          // A voice taken out of the catalogue since submission: the task's input is gone.
          if (error instanceof AppError && error.code === ErrorCode.NotFound) return undefined;
          throw error;
        }
      },
      avatarPortrait: (accountId, avatarId) => library.avatarPortrait(accountId, avatarId),
    };
    // The probes of this process's workers, given a reloaded catalogue's backends.
    const probes: BackendHealthService[] = [];
    const modelsReload = new ModelsReloadService({
      db,
      clock,
      current: () => models,
      check: (configured) => {
        const checked = checkCatalogue(configured, engines);
        return {
          built: { models: checked.models, backends: recordedBackends(checked.models, engines) },
          problems: checked.problems,
        };
      },
      apply: (built, nextSecrets) => {
        models = [...built.models];
        backends = [...built.backends];
        secrets.clear();
        for (const [name, value] of nextSecrets) secrets.set(name, value);
        catalogue.replace(models);
        voices.replaceConfigured(configuredVoices(models));
        accounts.replaceCategories(creditCategories(config.creditCategories, models));
        health.track(configuredBackends(models));
        for (const probe of probes) probe.replace(backends);
        void pools.refresh();
      },
      announce: () => announce(topics.models, 'reload'),
    });
    /** A message to every node; an operator command opens the channel just for it. */
    const announce = async (topic: string, message: string) => {
      if (role !== 'command' || database.connectionUrl === null) {
        await broadcast.publish(topic, message);
        return;
      }
      const channel = await PostgresBroadcast.open(database.connectionUrl, 'atelier_broadcast');
      try {
        await channel.publish(topic, message);
      } finally {
        await channel.close();
      }
    };
    return {
      config,
      database,
      services,
      oauth,
      events,
      mcpCancellations: topicOf(broadcast, topics.mcpCancel),
      modelsReload,
      followModelReloads(source, log) {
        const unsubscribe = broadcast.subscribe(topics.models, () => {
          void modelsReload.reloadInBackground(source, log, 'announced');
        });
        closers.push(async () => unsubscribe());
      },
      metrics,
      startWorkers(log, concurrency = config.workerConcurrency) {
        const workers = startWorkers(
          {
            db,
            events,
            storage,
            engines,
            model: (modelId) => models.find((m) => m.modelId === modelId),
            inputs,
            leaseMs: config.taskLeaseMs,
            pollMs: config.taskPollMs,
            maxRunningPerAccount: config.accountMaxRunningTasks,
            // The same finish as cancellation's, reporting its metrics and events to this log.
            finisher: new TaskFinisher({ db, events, metrics, log }),
            drainMs: config.shutdownDrainMs,
            backends,
            backendsChanged: () => broadcast.publish(topics.backends, 'changed'),
            clock,
            uploads,
            audit,
            webhooks: {
              box: webhookSecrets,
              timeoutMs: config.webhooks.timeoutMs,
              allowLocalhost: config.webhooks.allowLocalhost,
              ...(overrides.webhookNetwork ? { network: overrides.webhookNetwork } : {}),
            },
          },
          log,
          concurrency,
        );
        probes.push(workers.health);
        // Drained before the events and the database close (closers run in reverse).
        closers.push(() => workers.stop());
        return workers.runner;
      },
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
