import { z } from 'zod';
import { deploymentVariables } from './deployment.ts';
import { modelsSchema } from './models.schema.ts';
import { tracingVariables } from './tracing.ts';
import { fromJson, isHttpOrigin, isHttpUrl, isWebOrigin, wholeNumber } from './values.ts';
import type { Variable } from './variable.ts';

/**
 * Every variable Atelier reads, in the table's order: the loader's schema, its defaults and
 * the configuration table of docs/configuration.md are made from this (`npm run docs:config` rewrites the
 * table; a conformance test fails when they differ).
 */
export const variables = {
  PORT: { type: wholeNumber(1, 65_535), default: '8080', description: 'HTTP port' },
  HOST: {
    type: z.string().min(1, 'must not be empty'),
    default: '127.0.0.1',
    description: 'interface to bind (loopback: not exposed)',
  },
  METRICS_TOKEN: {
    type: z
      .string()
      .regex(/^[\x21-\x7e]{16,}$/, 'expected at least 16 printable characters, no spaces')
      .optional(),
    description: 'bearer token `GET /metrics` requires (≥ 16 printable characters)',
  },
  METRICS_PORT: {
    type: wholeNumber(1, 65_535).optional(),
    description: 'serve `/metrics` only on this port (not on `PORT`)',
  },
  METRICS_HOST: {
    type: z.string().min(1, 'must not be empty'),
    default: '127.0.0.1',
    description: 'interface of `METRICS_PORT`',
  },
  PUBLIC_URL: {
    type: z
      .string()
      .refine(isHttpOrigin, 'expected an http(s) URL such as https://atelier.example.com')
      .transform((url) => url.replace(/\/+$/, '')),
    // No default here: the loader derives it from PORT, so `PORT=9000 npm start` prints working URLs.
    shownDefault: '`http://localhost:$PORT`',
    description: 'the URL clients use (no trailing slash)',
  },
  DATA_DIR: {
    type: z.string().min(1, 'must not be empty'),
    default: './data',
    description: 'embedded database and, later, media and keys',
  },
  DATABASE_URL: {
    type: z
      .string()
      .refine((url) => /^postgres(ql)?:\/\//.test(url), 'expected a postgres:// URL')
      .optional(),
    description: '`postgres://…` to use PostgreSQL instead of the embedded PGlite',
  },
  DATABASE_PREPARED_STATEMENTS: {
    type: z.enum(['true', 'false']),
    default: 'true',
    description:
      'with `DATABASE_URL`: whether the hottest statements run as named prepared statements; `false` behind a pooler that cannot keep them (PgBouncer before 1.21 in transaction mode)',
  },
  DATABASE_TIMEOUT_MS: {
    type: wholeNumber(100, 600_000),
    default: '1500', // 1.5 seconds
    description:
      'with `DATABASE_URL`: how long one statement, or getting a connection, may take; PostgreSQL cancels a statement past it (`statement_timeout`) and a request meeting a stalled server is answered as one meeting a cut one, not kept waiting (migrations are not bounded)',
  },
  LOG_LEVEL: {
    type: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    description: '`fatal` `error` `warn` `info` `debug` `trace` `silent`',
  },
  CONFIG_FILE: {
    // Read by the loader before everything else; declared for the table and the deployment checks.
    type: z.string().optional(),
    description: 'path of a JSON object with any of the names above',
  },
  NODE_ENV: {
    type: z.string().optional(),
    description:
      '`production` (any letter case) turns `GRAPHQL_INTROSPECTION` off unless it is set, and refuses `OAUTH_CIMD_DEV_CA` and `WEBHOOK_ALLOW_LOCALHOST`; unset is development; a value other than `production`, `development` or `test` counts as `production`, with a warning',
  },
  MODELS: {
    type: modelsSchema,
    default: '[]',
    description:
      'JSON array of models added to (or replacing, by `modelId`) the built-in catalogue; see [Models and engines](models.md)',
  },
  CREDIT_CATEGORIES: {
    type: z
      .string()
      .regex(/^[a-z0-9_-]+(,[a-z0-9_-]+)*$/, 'expected comma-separated category names')
      .transform((s) => s.split(',')),
    default: 'standard',
    description: 'categories spent, in this order, by models whose pricing names none',
  },
  WORKER_CONCURRENCY: {
    type: wholeNumber(0, 64),
    default: '2',
    description: 'tasks this process runs at once; `0` for an API-only node',
  },
  TASK_LEASE_MS: {
    type: wholeNumber(1_000, 3_600_000),
    default: '30000', // 30 seconds
    description:
      "a claimed task's lease; renewed every third of it; a dead worker's task returns after it",
  },
  TASK_MAX_ATTEMPTS: {
    type: wholeNumber(1, 20),
    default: '3',
    description:
      'attempts before a task whose worker keeps dying (code 5) or failing (code 1) is given up',
  },
  ACCOUNT_MAX_RUNNING_TASKS: {
    type: wholeNumber(0, 10_000),
    default: '4',
    description:
      'tasks one account may have running at once over all workers (`0`: no limit); the next ones wait, and say so in `Task.waitingReason`',
  },
  TASK_POLL_MS: {
    type: wholeNumber(10, 60_000),
    default: '2000', // 2 seconds
    description: 'how often an idle worker looks for work when no wake-up arrives',
  },
  MEDIA_URL_TTL_SECONDS: {
    type: wholeNumber(10, 7 * 86_400),
    default: '3600', // 1 hour
    description: 'lifetime of download URLs',
  },
  OPENAI_WAIT_SECONDS: {
    type: wholeNumber(1, 600),
    default: '120', // 2 minutes
    description:
      'how long a `/v1` image or speech request waits for its generation before answering `504` with the IDs to find it later (docs/errors.md)',
  },
  SHUTDOWN_DRAIN_MS: {
    type: wholeNumber(0, 600_000),
    default: '15000', // 15 seconds
    description:
      'on SIGTERM, how long running tasks may finish before they are handed back to the queue',
  },
  GRAPHQL_MAX_DEPTH: {
    type: wholeNumber(2, 100),
    default: '12',
    description:
      'deepest nesting of one GraphQL document, fragments expanded (see [the GraphQL API](graphql.md#using-the-api))',
  },
  GRAPHQL_MAX_ALIASES: {
    type: wholeNumber(0, 1000),
    default: '30',
    description: 'aliases in one GraphQL document',
  },
  GRAPHQL_MAX_ROOT_FIELDS: {
    type: wholeNumber(1, 1000),
    default: '20',
    description: 'root fields of one GraphQL operation',
  },
  GRAPHQL_MAX_COST: {
    type: wholeNumber(1, 10_000_000),
    default: '20000',
    description:
      'cost of one GraphQL document (each field 1, times the page size of every list above it)',
  },
  GRAPHQL_MAX_TOKENS: {
    type: wholeNumber(10, 1_000_000),
    default: '2000',
    description: 'lexical tokens of one GraphQL document (counted before parsing)',
  },
  GRAPHQL_MAX_LENGTH: {
    type: wholeNumber(100, 10_000_000),
    default: '20000',
    description: 'characters of one GraphQL document',
  },
  GRAPHQL_INTROSPECTION: {
    type: z.enum(['true', 'false']).optional(),
    shownDefault: '`true`, or `false` when `NODE_ENV=production`',
    description:
      'whether `__schema` and `__type` are answered, and error messages suggest names ("Did you mean …?")',
  },
  MAX_BODY_BYTES: {
    type: wholeNumber(1024, 100 * 1024 * 1024),
    default: String(256 * 1024), // 256 KiB
    description: 'largest request body outside uploads (256 KiB)',
  },
  UPLOAD_MAX_BYTES: {
    type: wholeNumber(1024, 1024 ** 3),
    default: String(50 * 1024 * 1024), // 50 MiB
    description: 'largest upload (50 MiB); a bigger body is refused with `413`',
  },
  UPLOAD_MAX_IMAGE_PIXELS: {
    type: wholeNumber(16, 16_384),
    default: '8192', // per side
    description: 'largest width or height of an uploaded image',
  },
  UPLOAD_MAX_AUDIO_SECONDS: {
    type: wholeNumber(1, 3600),
    default: '600', // 10 minutes
    description: 'longest uploaded audio',
  },
  UPLOAD_URL_TTL_SECONDS: {
    type: wholeNumber(10, 86_400),
    default: '900', // 15 minutes
    description: 'lifetime of a `createUpload` URL',
  },
  FFMPEG_PATH: {
    type: z.string().min(1).optional(),
    shownDefault: "the npm package's binary",
    description: 'ffmpeg to use instead (FFmpeg ≥ 4 with libx264, AAC, libmp3lame, libopus)',
  },
  FFPROBE_PATH: {
    type: z.string().min(1).optional(),
    shownDefault: "the npm package's binary",
    description: 'ffprobe to use instead (from the same FFmpeg)',
  },
  IDP_ISSUER: {
    type: z
      .string()
      .refine(isHttpUrl, 'expected the issuer URL, e.g. https://accounts.example.com')
      .optional(),
    shownDefault: '— (built-in: `PUBLIC_URL/idp` when the data store was new, then kept)',
    description:
      'an external OpenID Connect issuer whose ID tokens are accepted; turns the built-in provider off',
  },
  IDP_AUDIENCE: {
    // Not a default the loader fills in: with IDP_ISSUER it must be given.
    type: z.string().min(1).optional(),
    shownDefault: '`atelier`',
    description:
      'the `aud` ID tokens must carry (your client ID at the issuer); required with `IDP_ISSUER`',
  },
  IDP_JWKS_URI: {
    type: z.string().refine(isHttpUrl, 'expected an http(s) URL').optional(),
    shownDefault: '— (discovery)',
    description: "the issuer's key set, skipping discovery",
  },
  IDP_CREATE_ACCOUNTS: {
    type: z.enum(['true', 'false']).optional(),
    shownDefault: '`true` built-in, `false` external',
    description: 'whether a first sign-in of an unknown identity opens an account',
  },
  IDP_ALGORITHMS: {
    type: z
      .string()
      .regex(
        /^((RS|PS|ES)(256|384|512)|EdDSA)(,((RS|PS|ES)(256|384|512)|EdDSA))*$/,
        'asymmetric JWS algorithms only, e.g. RS256,ES256',
      )
      .transform((s) => s.split(',')),
    default: 'RS256,ES256',
    description: 'accepted signature algorithms (asymmetric only)',
  },
  IDP_JWKS_REFRESH_FLOOR_MS: {
    type: wholeNumber(0, 3_600_000),
    default: '30000', // 30 seconds
    description: "least time between two fetches of the issuer's keys",
  },
  IDP_SIGN_IN_LIMIT: {
    type: wholeNumber(1, 10_000),
    default: '10', // failures per (email, IP), per 15 minutes
    description:
      'built-in sign-in failures per email and IP per 15 minutes (then `429` for that pair); past as many per email from anywhere, sign-ins for it are slowed, never refused',
  },
  OAUTH_CLIENTS: {
    type: z.preprocess(
      fromJson,
      z.array(
        z.object({
          client_id: z.string().min(1).max(200),
          client_name: z.string().min(1).max(200),
          redirect_uris: z
            .array(z.string().refine(isHttpUrl, 'expected http(s) redirect URIs'))
            .min(1),
        }),
      ),
    ),
    default: '[]',
    description:
      'JSON array of public MCP clients `{client_id, client_name, redirect_uris}` added to the built-in `atelier-local-tools`',
  },
  BROWSER_SESSION_MAX_AGE_SECONDS: {
    type: wholeNumber(60, 30 * 86_400),
    default: String(12 * 3600), // 12 hours, however active
    shownDefault: '`43200` (12 h)',
    description:
      'a sign-in browser session ends this long after it began, however active (besides 30 minutes idle)',
  },
  OAUTH_CIMD_HOSTS: {
    type: z
      .string()
      .regex(
        /^(\*|[a-z0-9.-]+(,[a-z0-9.-]+)*)?$/,
        'expected *, a comma-separated host list, or nothing',
      ),
    default: '*',
    emptyIsAValue: true,
    description:
      'hosts whose Client ID Metadata Documents are accepted: `*` any public host, a comma-separated list, or empty for none',
  },
  OAUTH_CIMD_DEV_CA: {
    type: z.string().min(1, 'must not be empty').optional(),
    description:
      'development only (refused with `NODE_ENV=production`): a PEM CA certificate file; metadata documents on `https://localhost`, `https://127.0.0.1` and `https://[::1]` are then accepted when served with a certificate from this CA, to try CIMD on one machine',
  },
  WEBHOOK_ALLOW_LOCALHOST: {
    type: z.enum(['true', 'false']).optional(),
    shownDefault: '`false`',
    description:
      'development only (refused with `NODE_ENV=production`): `true` lets webhook endpoints be `http://localhost`, `127.0.0.1` or `[::1]` URLs, to try webhooks on one machine',
  },
  WEBHOOK_TIMEOUT_SECONDS: {
    type: wholeNumber(1, 60),
    default: '10',
    description:
      'how long a webhook delivery may take before it counts as failed and is tried again',
  },
  AUDIT_RETENTION_DAYS: {
    type: wholeNumber(1, 36_500),
    default: '400',
    shownDefault: '`400` (a year and a month)',
    description: 'how long audit log entries are kept; the workers remove older ones every hour',
  },
  MCP_ALLOWED_ORIGINS: {
    type: z
      .string()
      .transform((list) => list.split(',').map((origin) => origin.trim()))
      .transform((list) => list.filter((origin) => origin !== ''))
      .refine(
        (list) => list.every(isWebOrigin),
        'expected comma-separated origins such as https://app.example.com (scheme, host and port only)',
      ),
    default: '',
    description:
      'comma-separated origins whose browser pages may call `/mcp` (CORS); any other foreign `Origin` is refused with `403`',
  },
  ...deploymentVariables,
  ...tracingVariables,
} satisfies Record<string, Variable>;
