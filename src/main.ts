import pino from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config/config.ts';
import { buildCore, type Core } from './core.ts';
import { ensureFirstRun, type FirstRun } from './services/first-run.service.ts';
import type { ModelsSource } from './services/models-reload.service.ts';
import type { Logger } from './shared/logger.ts';
import { listenFailure } from './shared/startup-error.ts';

/**
 * `atelier serve`: the API on HOST:PORT until SIGTERM or SIGINT, then a graceful close
 * (in-flight requests finish, the database is closed, the data directory unlocked).
 */
export async function serve(
  config: Config,
  hooks: {
    /** Once listening: starts something beside the server; what it resolves with stops it. */
    listening?: (core: Core) => Promise<(() => Promise<void>) | undefined>;
    /** The configuration read again, for `models reload` announced by a node and SIGHUP. */
    reloadSource?: () => ModelsSource;
  } = {},
): Promise<void> {
  for (const warning of config.warnings) console.warn(`WARNING: ${warning}`);
  const app = await buildApp(config);
  let stopBeside: (() => Promise<void>) | undefined;
  let firstRun: FirstRun | null;
  try {
    const idp = app.services.identityProvider;
    if (idp !== null && idp.issuer !== config.identity.issuer) {
      // Not refused: tokens, identities and sign-ins all use the recorded issuer and keep working.
      console.warn(
        `WARNING: the built-in identity provider keeps this data store's issuer ${idp.issuer}, ` +
          `not ${config.identity.issuer} (PUBLIC_URL/idp); sign-ins work as before. ` +
          'See docs/authentication.md, "The built-in identity provider\'s issuer".',
      );
    }
    firstRun =
      app.database.backend === 'pglite'
        ? await ensureFirstRun({
            db: app.database.db,
            accounts: app.services.accounts,
            apiKeys: app.services.apiKeys,
            identityProvider: app.services.identityProvider,
          })
        : null;
    await app.http.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenFailure(error, config.host, config.port, 'PORT');
    });
    const { metrics } = config;
    if (app.metricsHttp !== null && metrics.port !== null) {
      const { host, port } = metrics;
      await app.metricsHttp.listen({ port, host }).catch((error: unknown) => {
        throw listenFailure(error, host, port, 'METRICS_PORT');
      });
    }
    stopBeside = await hooks.listening?.(app);
  } catch (error) {
    await stopBeside?.();
    await app.close();
    throw error;
  }
  // The signals are handled before the banner says "ready": whoever waits for it may stop
  // this process the moment it reads it.
  const stopHangUps =
    hooks.reloadSource === undefined
      ? () => {}
      : followReloads(app, hooks.reloadSource, app.http.log);
  const stopped = untilStopped(app.http.log, async () => {
    stopHangUps();
    await stopBeside?.();
    await app.close();
  });
  printBanner(config, firstRun);
  await stopped;
}

/**
 * `atelier worker`: task workers only, no HTTP (scale them by queue depth). SIGTERM stops
 * claiming, lets running tasks finish for SHUTDOWN_DRAIN_MS, and hands the rest back.
 */
export async function work(config: Config, reloadSource?: () => ModelsSource): Promise<void> {
  for (const warning of config.warnings) console.warn(`WARNING: ${warning}`);
  const log = pino({ level: config.logLevel });
  const core = await buildCore(config, {}, 'worker');
  const concurrency = Math.max(1, config.workerConcurrency);
  core.startWorkers(log, concurrency);
  const stopHangUps =
    reloadSource === undefined ? () => {} : followReloads(core, reloadSource, log);
  const stopped = untilStopped(log, async () => {
    stopHangUps();
    await core.close();
  });
  process.stderr.write(
    `Atelier worker running ${concurrency} task slot(s); SIGTERM drains and stops.\n`,
  );
  await stopped;
}

/**
 * Models without a restart: reloads announced by any node are followed, and SIGHUP reloads
 * this node's `MODELS` (and announces it to the others), as `bin/atelier models reload` does.
 * Returns what stops listening for SIGHUP.
 */
function followReloads(core: Core, source: () => ModelsSource, log: Logger): () => void {
  core.followModelReloads(source, log);
  const hangUp = () => void core.modelsReload.reloadInBackground(source, log, 'SIGHUP');
  process.on('SIGHUP', hangUp);
  return () => process.off('SIGHUP', hangUp);
}

/** Resolves once SIGTERM or SIGINT has been handled by `close` (errors are logged). */
function untilStopped(log: Logger, close: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'shutting down');
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      close().then(resolve, (error: unknown) => {
        log.error({ err: error }, 'error while shutting down');
        resolve();
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

/**
 * The address for clients comes first and is `PUBLIC_URL`, never the bound socket: it is the
 * OAuth issuer and the MCP resource, so an agent given another spelling of the same server
 * (`127.0.0.1` for `localhost`) fails discovery (issue 18).
 */
function printBanner(config: Config, firstRun: FirstRun | null): void {
  const lines = [
    '',
    `Atelier is ready. Give clients this address (PUBLIC_URL): ${config.publicUrl}`,
    `  MCP:     ${config.publicUrl}/mcp (agents must use exactly this origin)`,
    `  GraphQL: ${config.publicUrl}/graphql`,
    `  Metrics: ${
      config.metrics.port === null
        ? `${config.publicUrl}/metrics`
        : `http://${config.metrics.host}:${config.metrics.port}/metrics`
    }${config.metrics.token === null ? '' : ' (bearer token)'}`,
    `  Data:    ${config.databaseUrl === undefined ? `${config.dataDir} (embedded PGlite)` : 'PostgreSQL (DATABASE_URL)'}`,
    `  Socket:  HOST=${config.host} PORT=${config.port} (where it listens; clients use PUBLIC_URL)`,
  ];
  if (firstRun !== null) {
    const balance = firstRun.account.creditBalances
      .map((b) => `${b.amount} ${b.category}`)
      .join(', ');
    lines.push(
      '',
      `First run: created the account "${firstRun.account.alias}" (${firstRun.account.id}) with ${balance} credits.`,
      'Its API key, shown this once (keep it; `bin/atelier apikey create` makes more):',
      '',
      `  ${firstRun.apiKeySecret}`,
      ...(firstRun.signIn === null
        ? []
        : [
            '',
            `Sign in at ${config.publicUrl}/login as ${firstRun.signIn.email} with the password (shown once):`,
            '',
            `  ${firstRun.signIn.password}`,
          ]),
      '',
      'Try it:',
      `  curl -s ${config.publicUrl}/graphql -H 'content-type: application/json' \\`,
      `    -H 'authorization: Bearer ${firstRun.apiKeySecret}' \\`,
      `    -d '{"query":"{ getUserByPrivateId { id alias creditBalances { category amount } } }"}'`,
    );
  }
  // stderr, so a redirected JSON log (stdout) never holds the key.
  process.stderr.write(`${lines.join('\n')}\n\n`);
}
