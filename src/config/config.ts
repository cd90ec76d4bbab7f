import path from 'node:path';
import { z } from 'zod';
import type { ModelDefinition } from '../domain/model.ts';
import { type CimdDevCa, readCimdDevCa } from './cimd-dev-ca.ts';
import { readConfigFile } from './config-file.ts';
import { type DeploymentConfig, deploymentConfig, deploymentProblems } from './deployment.ts';
import { modelCredentials } from './model-credentials.ts';
import { readNodeEnv } from './node-env.ts';
import type { QueryLimits } from './query-limits.ts';
import { type TracingConfig, tracingConfig, tracingProblems } from './tracing.ts';
import { defaultsOf, shapeOf, type Variable } from './variable.ts';
import { variables } from './variables.ts';
import { unsafeDefaults } from './warnings.ts';

/**
 * Configuration is read once, at start, from the environment and an optional JSON file
 * (`CONFIG_FILE`, keys spelled like the variables; the environment wins). The result is
 * validated, typed and frozen; nothing else in the code reads `process.env`.
 */
export interface Config extends DeploymentConfig {
  /** TCP port of the HTTP server. */
  readonly port: number;
  /** Interface to bind; loopback by default so a laptop install is not exposed. */
  readonly host: string;
  /** The origin clients use to reach this server, without a trailing slash. */
  readonly publicUrl: string;
  /** Foreign origins whose browser pages may call `/mcp` (CORS); `PUBLIC_URL`'s own is always allowed. */
  readonly mcpAllowedOrigins: readonly string[];
  /** Absolute path of the data directory (embedded database, media, keys). */
  readonly dataDir: string;
  /** `postgres://…` to use PostgreSQL; absent for the embedded PGlite database. */
  readonly databaseUrl: string | undefined;
  /** With PostgreSQL: the hot statements run as named prepared statements (store/prepared.ts). */
  readonly databasePreparedStatements: boolean;
  /** With PostgreSQL: the bound of one statement and of getting a connection (ms). */
  readonly databaseTimeoutMs: number;
  readonly logLevel: LogLevel;
  /** Models added to (or replacing, by modelId) the built-in catalogue. */
  readonly models: readonly ModelDefinition[];
  /**
   * The model servers' credentials, by the variable names models give in `apiKeyEnv`. A Map,
   * so that serialising the configuration (a log line, a debug dump) shows none of them.
   */
  readonly secrets: ReadonlyMap<string, string>;
  /** Credit categories spent, in this order, by models that name none. */
  readonly creditCategories: readonly string[];
  /** Tasks this process runs at once; 0 for an API-only node. */
  readonly workerConcurrency: number;
  /** How long a claimed task's lease lasts without a heartbeat. */
  readonly taskLeaseMs: number;
  /** How often an idle worker looks for work when no wake-up arrives. */
  readonly taskPollMs: number;
  /** Attempts before a task whose worker keeps dying or failing is given up. */
  readonly taskMaxAttempts: number;
  /** Tasks one account may have running at once, over all workers; 0 for no limit. */
  readonly accountMaxRunningTasks: number;
  /** Lifetime of signed download URLs. */
  readonly mediaUrlTtlMs: number;
  /** How long a `/v1` request waits for its generation to finish before answering without it. */
  readonly openaiWaitMs: number;
  readonly webhooks: WebhookConfig;
  /** How long audit log entries are kept. */
  readonly auditRetentionDays: number;
  /** Size and cost limits of GraphQL documents, and whether introspection is answered. */
  readonly graphqlLimits: QueryLimits;
  /** Largest request body outside uploads (GraphQL variables included). */
  readonly maxBodyBytes: number;
  /** Limits on uploaded media (createUpload, PUT /uploads/:id). */
  readonly uploads: UploadConfig;
  /** ffmpeg and ffprobe; null for the binaries the npm packages ship. */
  readonly ffmpegPath: string | null;
  readonly ffprobePath: string | null;
  /** How long a stopping process lets running tasks finish before handing them back. */
  readonly shutdownDrainMs: number;
  /** Failed sign-ins allowed per (email, IP) per 15 minutes (built-in provider); past as many per email, sign-ins slow down. */
  readonly signInLimit: number;
  /** The authorization server for MCP clients (spec §4.3, §5.4). */
  readonly oauth: OauthConfig;
  /** The identity provider whose ID tokens are accepted (spec §5.2). */
  readonly identity: IdentityConfig;
  /** Who may read `GET /metrics`, and where it is served. */
  readonly metrics: MetricsConfig;
  /** OpenTelemetry traces (the standard `OTEL_*` variables); null when tracing is off. */
  readonly tracing: TracingConfig | null;
  /** Unsafe development defaults in force, said loudly at start. */
  readonly warnings: readonly string[];
}

/** `GET /metrics` protection: a bearer token it requires, a listener of its own, or both. */
export interface MetricsConfig {
  /** `Authorization: Bearer <token>` required when set. */
  readonly token: string | null;
  /** Served only on this port (and no longer on the main one) when set. */
  readonly port: number | null;
  /** The interface of that port; loopback by default. */
  readonly host: string;
}

export interface UploadConfig {
  readonly maxBytes: number;
  readonly maxImagePixels: number;
  readonly maxAudioSeconds: number;
  readonly urlTtlMs: number;
}

/**
 * Without `IDP_ISSUER` the built-in provider is the identity provider; with it, any OpenID
 * Connect issuer is, and the built-in one is off.
 */
export interface IdentityConfig {
  readonly builtin: boolean;
  /**
   * `IDP_ISSUER`; for the built-in provider `PUBLIC_URL/idp`, which only a data store's first
   * start records: after that the recorded one counts (`BuiltinIdentityProvider.issuer`).
   */
  readonly issuer: string;
  /** The `aud` an ID token must carry; also the client ID the sign-in page uses. */
  readonly audience: string;
  /** Skips discovery when set. */
  readonly jwksUri: string | null;
  /** The floor between two fetches of the issuer's keys (a token with an unknown kid refetches). */
  readonly jwksRefreshFloorMs: number;
  /** Whether a first sign-in of an unknown identity opens an account. */
  readonly createAccounts: boolean;
  readonly algorithms: readonly string[];
}

export interface WebhookConfig {
  /** The development switch admitting `http://localhost` endpoints; always false in production. */
  readonly allowLocalhost: boolean;
  readonly timeoutMs: number;
}

export interface OauthClientConfig {
  readonly client_id: string;
  readonly client_name: string;
  readonly redirect_uris: readonly string[];
}

export interface OauthConfig {
  /** `PUBLIC_URL`: the authorization server's issuer identifier. */
  readonly issuer: string;
  /** `PUBLIC_URL/mcp`: the one resource tokens are issued for. */
  readonly resource: string;
  readonly clients: readonly OauthClientConfig[];
  /** Hosts whose Client ID Metadata Documents are accepted: a list, `*` (any public host), or none. */
  readonly cimdHosts: readonly string[] | '*';
  /** The development switch admitting documents on this computer; null (always, in production) when off. */
  readonly cimdDevCa: CimdDevCa | null;
  /** Cookies get `Secure` and the `__Host-` prefix unless the public URL is plain-http localhost. */
  readonly secureCookies: boolean;
  /** A browser session ends this long after it began, however active (besides 30 min idle). */
  readonly sessionMaxAgeMs: number;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** An invalid configuration: every problem, not just the first. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

const schema = z.object(shapeOf(variables));
const defaults = defaultsOf(variables);

/** Every variable the configuration reads (the deployment files are checked against it). */
export const configVariables: readonly string[] = Object.keys(variables);

export interface ConfigSources {
  env: Readonly<Record<string, string | undefined>>;
  /** Directory that relative paths (DATA_DIR, CONFIG_FILE) are resolved against. */
  cwd: string;
}

/**
 * This process's configuration, from its environment and working directory as they are now:
 * at start, and again for `models reload` and SIGHUP. The one place the process's own
 * environment is read.
 */
export function loadProcessConfig(): Config {
  return loadConfig({ env: process.env, cwd: process.cwd() });
}

/** Reads, validates and freezes the configuration; throws {@link ConfigError} listing all problems. */
export function loadConfig({ env, cwd }: ConfigSources): Config {
  const problems: string[] = [];
  const file = readConfigFile(env.CONFIG_FILE, cwd, problems);
  const raw: Record<string, unknown> = { ...defaults };
  for (const [key, variable] of Object.entries(variables) as [string, Variable][]) {
    const given = env[key] !== undefined && (env[key] !== '' || variable.emptyIsAValue === true);
    const value = given ? env[key] : file[key];
    if (value !== undefined) raw[key] = value;
  }
  // The default public URL follows the port, so `PORT=9000 npm start` prints working URLs.
  // An invalid PORT is reported once, as PORT, not again through the derived URL.
  const port = /^\d+$/.test(String(raw.PORT)) ? String(raw.PORT) : variables.PORT.default;
  raw.PUBLIC_URL ??= `http://localhost:${port}`;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(describeIssue(issue, raw));
  }
  if (
    parsed.success &&
    parsed.data.IDP_ISSUER !== undefined &&
    parsed.data.IDP_AUDIENCE === undefined
  ) {
    problems.push(
      'IDP_AUDIENCE: required with IDP_ISSUER (the client ID your ID tokens are issued to)',
    );
  }
  if (parsed.success && parsed.data.METRICS_PORT === parsed.data.PORT) {
    problems.push('METRICS_PORT: must differ from PORT (it is a listener of its own)');
  }
  if (parsed.success) problems.push(...deploymentProblems(parsed.data));
  if (parsed.success) problems.push(...tracingProblems(parsed.data));
  const nodeEnv = readNodeEnv(parsed.success ? parsed.data.NODE_ENV : undefined);
  const production = nodeEnv.environment === 'production';
  if (parsed.success && parsed.data.WEBHOOK_ALLOW_LOCALHOST === 'true' && production) {
    problems.push(
      'WEBHOOK_ALLOW_LOCALHOST: refused with NODE_ENV=production: it is a development switch that sends webhooks to this computer; unset it',
    );
  }
  const cimdDevCa = parsed.success ? readCimdDevCa(parsed.data, production, cwd, problems) : null;
  // MODELS on its own, so a missing credential is listed even when another variable is wrong.
  const models = variables.MODELS.type.safeParse(raw.MODELS);
  const credentials = models.success
    ? modelCredentials(models.data as ModelDefinition[], env)
    : { secrets: new Map<string, string>(), problems: [] };
  problems.push(...credentials.problems);
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);

  const values = parsed.data;
  const config: Config = {
    port: values.PORT,
    host: values.HOST,
    metrics: {
      token: values.METRICS_TOKEN ?? null,
      port: values.METRICS_PORT ?? null,
      host: values.METRICS_HOST,
    },
    publicUrl: values.PUBLIC_URL,
    mcpAllowedOrigins: values.MCP_ALLOWED_ORIGINS,
    dataDir: path.resolve(cwd, values.DATA_DIR),
    databaseUrl: values.DATABASE_URL,
    databasePreparedStatements: values.DATABASE_PREPARED_STATEMENTS === 'true',
    databaseTimeoutMs: values.DATABASE_TIMEOUT_MS,
    logLevel: values.LOG_LEVEL,
    models: values.MODELS as ModelDefinition[],
    secrets: credentials.secrets,
    creditCategories: values.CREDIT_CATEGORIES,
    workerConcurrency: values.WORKER_CONCURRENCY,
    taskLeaseMs: values.TASK_LEASE_MS,
    taskPollMs: values.TASK_POLL_MS,
    taskMaxAttempts: values.TASK_MAX_ATTEMPTS,
    accountMaxRunningTasks: values.ACCOUNT_MAX_RUNNING_TASKS,
    mediaUrlTtlMs: values.MEDIA_URL_TTL_SECONDS * 1000,
    openaiWaitMs: values.OPENAI_WAIT_SECONDS * 1000,
    webhooks: {
      allowLocalhost: values.WEBHOOK_ALLOW_LOCALHOST === 'true',
      timeoutMs: values.WEBHOOK_TIMEOUT_SECONDS * 1000,
    },
    auditRetentionDays: values.AUDIT_RETENTION_DAYS,
    shutdownDrainMs: values.SHUTDOWN_DRAIN_MS,
    graphqlLimits: {
      maxDepth: values.GRAPHQL_MAX_DEPTH,
      maxAliases: values.GRAPHQL_MAX_ALIASES,
      maxRootFields: values.GRAPHQL_MAX_ROOT_FIELDS,
      maxCost: values.GRAPHQL_MAX_COST,
      maxTokens: values.GRAPHQL_MAX_TOKENS,
      maxLength: values.GRAPHQL_MAX_LENGTH,
      // On by default in development; off in production unless asked for.
      introspection: (values.GRAPHQL_INTROSPECTION ?? String(!production)) === 'true',
    },
    maxBodyBytes: values.MAX_BODY_BYTES,
    uploads: {
      maxBytes: values.UPLOAD_MAX_BYTES,
      maxImagePixels: values.UPLOAD_MAX_IMAGE_PIXELS,
      maxAudioSeconds: values.UPLOAD_MAX_AUDIO_SECONDS,
      urlTtlMs: values.UPLOAD_URL_TTL_SECONDS * 1000,
    },
    ffmpegPath: values.FFMPEG_PATH ?? null,
    ffprobePath: values.FFPROBE_PATH ?? null,
    signInLimit: values.IDP_SIGN_IN_LIMIT,
    ...deploymentConfig(values),
    tracing: tracingConfig(values),
    oauth: {
      issuer: values.PUBLIC_URL,
      resource: `${values.PUBLIC_URL}/mcp`,
      clients: values.OAUTH_CLIENTS,
      cimdHosts:
        values.OAUTH_CIMD_HOSTS === '*'
          ? '*'
          : values.OAUTH_CIMD_HOSTS.split(',').filter((h) => h !== ''),
      cimdDevCa,
      secureCookies: !/^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(values.PUBLIC_URL),
      sessionMaxAgeMs: values.BROWSER_SESSION_MAX_AGE_SECONDS * 1000,
    },
    identity: {
      builtin: values.IDP_ISSUER === undefined,
      issuer: values.IDP_ISSUER?.replace(/\/+$/, '') ?? `${values.PUBLIC_URL}/idp`,
      audience: values.IDP_AUDIENCE ?? 'atelier',
      jwksUri: values.IDP_JWKS_URI ?? null,
      jwksRefreshFloorMs: values.IDP_JWKS_REFRESH_FLOOR_MS,
      createAccounts:
        (values.IDP_CREATE_ACCOUNTS ?? String(values.IDP_ISSUER === undefined)) === 'true',
      algorithms: values.IDP_ALGORITHMS,
    },
    warnings: [],
  };
  const warnings = [
    ...unsafeDefaults(config),
    ...(nodeEnv.warning === null ? [] : [nodeEnv.warning]),
  ];
  return deepFreeze({ ...config, warnings });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** Longest value quoted back in a problem; a `MODELS` array can be pages long. */
const longestQuoted = 200;

/**
 * A problem as the operator reads it: where (`MODELS[2].backends[0].name`), what is wrong, and
 * the value found there, when there is one, cut to a length.
 */
function describeIssue(
  issue: { readonly path: readonly PropertyKey[]; readonly message: string },
  raw: Readonly<Record<string, unknown>>,
): string {
  const [name, ...inside] = issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key));
  const where = inside.reduce<string>(
    (at, key) => (typeof key === 'number' ? `${at}[${key}]` : `${at}.${key}`),
    String(name),
  );
  let value: unknown = raw[String(name)];
  if (inside.length > 0 && typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      value = undefined;
    }
  }
  for (const key of inside) {
    value =
      value !== null && typeof value === 'object' && Object.hasOwn(value, key)
        ? (value as Record<PropertyKey, unknown>)[key]
        : undefined;
  }
  if (value === undefined) return `${where}: ${issue.message}`;
  const quoted = JSON.stringify(value);
  const cut = quoted.length > longestQuoted ? `${quoted.slice(0, longestQuoted)}…` : quoted;
  return `${where}: ${issue.message} (got ${cut})`;
}
