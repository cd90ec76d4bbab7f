import { isIP } from 'node:net';
import { z } from 'zod';
import { isHttpUrl, wholeNumber } from './values.ts';
import type { ShapeOf, Variable } from './variable.ts';

/**
 * The settings of a deployment beyond one machine: where media live (a directory or an
 * S3-compatible bucket), request rate limits, and which proxy to believe for client addresses.
 */

export interface S3Config {
  readonly bucket: string;
  readonly region: string;
  /** An S3-compatible service's URL; AWS's own endpoint when null. */
  readonly endpoint: string | null;
  readonly forcePathStyle: boolean;
  /** Prepended to every key: `''` or a path ending in `/`. */
  readonly prefix: string;
  /** Both or neither; neither means the AWS SDK's default credential chain. */
  readonly accessKeyId: string | null;
  readonly secretAccessKey: string | null;
  /**
   * Clients PUT uploads straight to the bucket (presigned), checked at first use; otherwise
   * they PUT them to Atelier, which checks them on arrival and writes them to the bucket.
   */
  readonly directUploads: boolean;
}

export interface RateLimitConfig {
  /** /graphql per account (per IP when anonymous) and /mcp per token; 0 turns it off. */
  readonly api: number;
  /** /oauth/token, /idp/sign-in and /auth/session per IP; 0 turns it off. */
  readonly auth: number;
  readonly windowMs: number;
  /**
   * `memory`: each node counts alone; `database` or `redis`: every node shares the count
   * (in PostgreSQL, or in the Redis of {@link RedisConfig}).
   */
  readonly store: 'memory' | 'database' | 'redis';
}

export interface RedisConfig {
  /** `redis://` or `rediss://` (TLS), with the password in the URL when there is one. */
  readonly url: string;
  /** Put before every key Atelier writes, so deployments can share one Redis. */
  readonly keyPrefix: string;
}

/**
 * Whose `X-Forwarded-For` to believe for the client's address (logs, per-IP limits): nobody
 * (false), everybody (true), that many hops, or these addresses and CIDR ranges.
 */
export type TrustProxy = boolean | number | readonly string[];

export interface DeploymentConfig {
  readonly trustProxy: TrustProxy;
  readonly rateLimits: RateLimitConfig;
  /** An optional Redis, for counting rate limits across nodes; null when none is set. */
  readonly redis: RedisConfig | null;
  /** Where media files live: `DATA_DIR/files`, or an S3-compatible bucket. */
  readonly mediaStore: { readonly kind: 'local' } | { readonly kind: 's3'; readonly s3: S3Config };
}

/** The variables of a deployment, in the configuration table's order (see variables.ts). */
export const deploymentVariables = {
  RATE_LIMIT_PER_WINDOW: {
    type: wholeNumber(0, 1_000_000),
    default: '600',
    description:
      '`/graphql` operations per account (or IP; HTTP and WebSocket together, one per generation submitted) and `/mcp` requests per token in a window; `0` turns it off',
  },
  RATE_LIMIT_AUTH_PER_WINDOW: {
    type: wholeNumber(0, 1_000_000),
    default: '30',
    description:
      '`GET /oauth/authorize`, `/oauth/token`, `/auth/session` and `/idp/sign-in` attempts per IP in a window; `0` turns it off',
  },
  RATE_LIMIT_WINDOW_SECONDS: {
    type: wholeNumber(1, 86_400),
    default: '60', // 1 minute
    description: 'length of a rate-limit window',
  },
  RATE_LIMIT_STORE: {
    type: z.enum(['memory', 'database', 'redis']).optional(),
    shownDefault: '`redis` with `REDIS_URL`, else `database` with `DATABASE_URL`, else `memory`',
    description:
      'where windows are counted: this node alone (`memory`), or every node through PostgreSQL (`database`) or Redis (`redis`)',
  },
  REDIS_URL: {
    type: z
      .string()
      .refine(isRedisUrl, 'expected a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379')
      .optional(),
    description:
      '`redis://[:password@]host:port[/db]` (`rediss://` for TLS): an optional Redis for shared rate-limit counts',
  },
  REDIS_KEY_PREFIX: {
    type: z.string().regex(/^[A-Za-z0-9_.:-]{0,64}$/, 'expected up to 64 of A-Z a-z 0-9 _ . : -'),
    default: 'atelier:',
    description: 'put before every key Atelier writes in Redis, so deployments can share one',
  },
  MEDIA_STORE: {
    type: z.enum(['local', 's3']),
    default: 'local',
    description: 'where media files live: `local` (`DATA_DIR/files`) or `s3`',
  },
  S3_BUCKET: {
    type: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected a bucket name')
      .optional(),
    description: 'the bucket (required with `MEDIA_STORE=s3`)',
  },
  S3_REGION: { type: z.string().min(1), default: 'us-east-1', description: 'its region' },
  S3_ENDPOINT: {
    type: z.string().refine(isHttpUrl, 'expected an http(s) URL').optional(),
    shownDefault: '— (AWS)',
    description: "an S3-compatible service's URL (MinIO, Ceph, R2…)",
  },
  S3_FORCE_PATH_STYLE: {
    type: z.enum(['true', 'false']),
    default: 'false',
    description: '`true` for services that want `endpoint/bucket/key` URLs',
  },
  S3_PREFIX: {
    type: z
      .string()
      .regex(/^([A-Za-z0-9_.-]+\/)*$/, 'expected nothing, or a path ending in / (media/)')
      .optional(),
    description: 'a path every key is put under, ending in `/`',
  },
  S3_ACCESS_KEY_ID: {
    type: z.string().min(1).optional(),
    shownDefault: '— (the AWS default credential chain)',
    description: 'static credentials with `S3_SECRET_ACCESS_KEY`, both or neither',
  },
  S3_SECRET_ACCESS_KEY: {
    type: z.string().min(1).optional(),
    shownDefault: '— (the AWS default credential chain)',
    description: 'static credentials with `S3_ACCESS_KEY_ID`, both or neither',
  },
  S3_DIRECT_UPLOADS: {
    type: z.enum(['true', 'false']),
    default: 'true',
    description:
      'with `MEDIA_STORE=s3`, `createUpload` hands out presigned PUTs to the bucket (checked at first use); `false`: uploads go through Atelier (checked on arrival)',
  },
  TRUST_PROXY: {
    type: z.string().transform((value, ctx) => {
      const parsed = parseTrustProxy(value);
      if (parsed === undefined)
        ctx.addIssue({
          code: 'custom',
          message: 'expected false, true, a hop count, or comma-separated addresses and CIDRs',
        });
      return parsed ?? false;
    }),
    default: 'false',
    description:
      "whose `X-Forwarded-For` gives the client's address (logs, per-IP limits): `false`, `true`, a hop count such as `1`, or comma-separated addresses and CIDRs of your proxies",
  },
} satisfies Record<string, Variable>;

type DeploymentValues = z.infer<z.ZodObject<ShapeOf<typeof deploymentVariables>>> & {
  DATABASE_URL?: string | undefined;
};

/** What no single variable can say wrong: settings that only make sense together. */
export function deploymentProblems(values: DeploymentValues): string[] {
  const problems: string[] = [];
  if (values.MEDIA_STORE === 's3' && values.S3_BUCKET === undefined)
    problems.push('S3_BUCKET: required with MEDIA_STORE=s3');
  if ((values.S3_ACCESS_KEY_ID === undefined) !== (values.S3_SECRET_ACCESS_KEY === undefined))
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: give both, or neither');
  if (values.RATE_LIMIT_STORE === 'redis' && values.REDIS_URL === undefined)
    problems.push('REDIS_URL: required with RATE_LIMIT_STORE=redis');
  return problems;
}

export function deploymentConfig(values: DeploymentValues): DeploymentConfig {
  return {
    trustProxy: values.TRUST_PROXY,
    mediaStore:
      values.MEDIA_STORE === 's3'
        ? {
            kind: 's3',
            s3: {
              bucket: values.S3_BUCKET!,
              region: values.S3_REGION,
              endpoint: values.S3_ENDPOINT ?? null,
              forcePathStyle: values.S3_FORCE_PATH_STYLE === 'true',
              prefix: values.S3_PREFIX ?? '',
              accessKeyId: values.S3_ACCESS_KEY_ID ?? null,
              secretAccessKey: values.S3_SECRET_ACCESS_KEY ?? null,
              directUploads: values.S3_DIRECT_UPLOADS === 'true',
            },
          }
        : { kind: 'local' },
    rateLimits: {
      api: values.RATE_LIMIT_PER_WINDOW,
      auth: values.RATE_LIMIT_AUTH_PER_WINDOW,
      windowMs: values.RATE_LIMIT_WINDOW_SECONDS * 1000,
      store: values.RATE_LIMIT_STORE ?? defaultRateLimitStore(values),
    },
    redis:
      values.REDIS_URL === undefined
        ? null
        : { url: values.REDIS_URL, keyPrefix: values.REDIS_KEY_PREFIX },
  };
}

/** Shared counts when there is something to share them through: Redis first, then PostgreSQL. */
function defaultRateLimitStore(values: DeploymentValues): RateLimitConfig['store'] {
  if (values.REDIS_URL !== undefined) return 'redis';
  return values.DATABASE_URL === undefined ? 'memory' : 'database';
}

function isRedisUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** `TRUST_PROXY`: false, true, a hop count, or addresses and CIDR ranges; undefined if none. */
function parseTrustProxy(value: string): boolean | number | string[] | undefined {
  const text = value.trim();
  if (text === 'false' || text === '') return false;
  if (text === 'true') return true;
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const entries = text.split(',').map((entry) => entry.trim());
  const valid = entries.every((entry) => {
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || rest.length > 0) return false;
    if (bits === undefined) return true;
    return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
  });
  return valid ? entries : undefined;
}
