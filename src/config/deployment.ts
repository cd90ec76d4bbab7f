import { isIP } from 'node:net';
import { z } from 'zod';
import { isHttpUrl, wholeNumber } from './values.ts';

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

export const deploymentSchema = {
  RATE_LIMIT_PER_WINDOW: wholeNumber(0, 1_000_000),
  RATE_LIMIT_AUTH_PER_WINDOW: wholeNumber(0, 1_000_000),
  RATE_LIMIT_WINDOW_SECONDS: wholeNumber(1, 86_400),
  RATE_LIMIT_STORE: z.enum(['memory', 'database', 'redis']).optional(),
  REDIS_URL: z
    .string()
    .refine(isRedisUrl, 'expected a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379')
    .optional(),
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{0,64}$/, 'expected up to 64 of A-Z a-z 0-9 _ . : -'),
  MEDIA_STORE: z.enum(['local', 's3']),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected a bucket name')
    .optional(),
  S3_REGION: z.string().min(1),
  S3_ENDPOINT: z.string().refine(isHttpUrl, 'expected an http(s) URL').optional(),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']),
  S3_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9_.-]+\/)*$/, 'expected nothing, or a path ending in / (media/)')
    .optional(),
  S3_DIRECT_UPLOADS: z.enum(['true', 'false']),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  TRUST_PROXY: z.string().transform((value, ctx) => {
    const parsed = parseTrustProxy(value);
    if (parsed === undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'expected false, true, a hop count, or comma-separated addresses and CIDRs',
      });
    return parsed ?? false;
  }),
};

export const deploymentDefaults = {
  TRUST_PROXY: 'false',
  MEDIA_STORE: 'local',
  S3_REGION: 'us-east-1',
  S3_FORCE_PATH_STYLE: 'false',
  S3_DIRECT_UPLOADS: 'true',
  RATE_LIMIT_PER_WINDOW: '600',
  RATE_LIMIT_AUTH_PER_WINDOW: '30',
  RATE_LIMIT_WINDOW_SECONDS: '60',
  REDIS_KEY_PREFIX: 'atelier:',
} as const;

type DeploymentValues = z.infer<z.ZodObject<typeof deploymentSchema>> & {
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
