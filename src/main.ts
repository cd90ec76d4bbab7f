import { buildApp } from './app.ts';
import type { Config } from './config/config.ts';
import { ensureFirstRun, type FirstRun } from './services/first-run.service.ts';

/**
 * `atelier serve`: the API on HOST:PORT until SIGTERM or SIGINT, then a graceful close
 * (in-flight requests finish, the database is closed, the data directory unlocked).
 */
export async function serve(config: Config): Promise<void> {
  for (const warning of config.warnings) console.warn(`WARNING: ${warning}`);
  const app = await buildApp(config);
  try {
    const firstRun =
      app.database.backend === 'pglite'
        ? await ensureFirstRun({
            db: app.database.db,
            accounts: app.services.accounts,
            apiKeys: app.services.apiKeys,
          })
        : null;
    await app.http.listen({ port: config.port, host: config.host });
    printBanner(config, firstRun);
  } catch (error) {
    await app.close();
    throw error;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      app.http.log.info({ signal }, 'shutting down');
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      app.close().then(resolve, (error: unknown) => {
        app.http.log.error({ err: error }, 'error while shutting down');
        resolve();
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

function printBanner(config: Config, firstRun: FirstRun | null): void {
  const lines = [
    '',
    `Atelier is listening on http://${config.host}:${config.port} (public URL ${config.publicUrl})`,
    `  GraphQL: ${config.publicUrl}/graphql`,
    `  Data:    ${config.databaseUrl === undefined ? `${config.dataDir} (embedded PGlite)` : 'PostgreSQL (DATABASE_URL)'}`,
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
