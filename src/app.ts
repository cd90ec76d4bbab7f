import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { ApiKeyVerifier } from './auth/api-key-verifier.ts';
import { GraphqlAuthenticator, noIdentityProvider } from './auth/authenticate.ts';
import type { Config } from './config/config.ts';
import { graphqlPlugin } from './edge/graphql/graphql.plugin.ts';
import { httpPlugin } from './edge/http/http.plugin.ts';
import { requestIdOf } from './edge/http/request-id.ts';
import type { Services } from './edge/services.ts';
import { AccountService } from './services/account.service.ts';
import { ApiKeyService } from './services/api-key.service.ts';
import { type Clock, systemClock } from './shared/clock.ts';
import { type Database, type DatabaseLocation, openDatabase } from './store/database.ts';
import { migrateToLatest, pendingMigrations } from './store/migrator.ts';

/** Things a caller may provide instead of the defaults (tests share a database, move time). */
export interface AppOverrides {
  /** An open, migrated database the app uses but does not close. */
  database?: Database;
  clock?: Clock;
  /** Where logs go (default: stdout). */
  logStream?: DestinationStream;
}

/** The wired core without HTTP: what `serve`, `worker` and the operator commands share. */
export interface Core {
  readonly config: Config;
  readonly database: Database;
  readonly services: Services;
  close(): Promise<void>;
}

export function databaseLocation(config: Config): DatabaseLocation {
  return config.databaseUrl === undefined
    ? { backend: 'pglite', dataDir: config.dataDir }
    : { backend: 'postgres', url: config.databaseUrl };
}

/** Opens (or adopts) the database, applies migrations and builds every service. */
export async function buildCore(config: Config, overrides: AppOverrides = {}): Promise<Core> {
  const owned = overrides.database === undefined;
  const database = overrides.database ?? (await openDatabase(databaseLocation(config)));
  try {
    if (owned) await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  const db = database.db;
  const clock = overrides.clock ?? systemClock;
  const verifier = new ApiKeyVerifier({ db, clock });
  const services: Services = {
    graphqlAuth: new GraphqlAuthenticator({ db, apiKeys: verifier, idTokens: noIdentityProvider }),
    accounts: new AccountService({ db, clock, credentialCache: verifier }),
    apiKeys: new ApiKeyService({ db, clock, verifier }),
    ready: async () => (await database.ping()) && (await pendingMigrations(db)).length === 0,
  };
  return {
    config,
    database,
    services,
    close: async () => {
      if (owned) await database.close();
    },
  };
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

/** The whole service, not yet listening: `main.ts` listens, tests listen on port 0. */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const core = await buildCore(config, overrides);
  const http = Fastify({
    logger: { level: config.logLevel, redact, stream: overrides.logStream ?? process.stdout },
    genReqId: requestIdOf,
    trustProxy: false,
  });
  http.addHook('onClose', async () => core.close());
  await http.register(httpPlugin, { services: core.services });
  await http.register(graphqlPlugin, { services: core.services });
  await http.ready();
  return { ...core, http, close: () => http.close() };
}
