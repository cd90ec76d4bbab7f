import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';
import { AppError, ErrorCode } from '../shared/errors.ts';

/** Thrown when the issuer's keys cannot be had right now: 100102, worth retrying later. */
export function identityUnavailable(cause: unknown): AppError {
  return new AppError(
    ErrorCode.IdentityUnavailable,
    'The identity provider cannot be reached to verify the ID token; try again shortly.',
    {},
    { cause },
  );
}

export interface RemoteKeysOptions {
  issuer: string;
  /** Skips discovery. */
  jwksUri: string | null;
  /** Bounds on the network: per request, and between refreshes for an unknown `kid`. */
  timeoutMs?: number;
  cooldownMs?: number;
}

/**
 * The signing keys of an external issuer: the JWKS URI comes from OpenID discovery (or
 * configuration); jose's remote key set caches the keys, refetches when a token names an
 * unknown `kid` (key rotation) but not more often than the cooldown, and bounds each fetch.
 * A failed discovery is retried on the next token, never cached.
 */
export function remoteIssuerKeys(options: RemoteKeysOptions): JWTVerifyGetKey {
  const timeoutDuration = options.timeoutMs ?? 5_000;
  let keys: Promise<JWTVerifyGetKey> | undefined;
  const load = async (): Promise<JWTVerifyGetKey> => {
    const uri = options.jwksUri ?? (await discoverJwksUri(options.issuer, timeoutDuration));
    return createRemoteJWKSet(new URL(uri), {
      timeoutDuration,
      cooldownDuration: options.cooldownMs ?? 30_000, // 30 seconds between refreshes
      cacheMaxAge: 600_000, // 10 minutes
    });
  };
  return async (header, token) => {
    keys ??= load().catch((error: unknown) => {
      keys = undefined;
      throw identityUnavailable(error);
    });
    const getKey = await keys;
    try {
      return await getKey(header, token);
    } catch (error) {
      // The token's fault: it names a key (or key type) the issuer does not publish.
      if (
        error instanceof errors.JWKSNoMatchingKey ||
        error instanceof errors.JWKSMultipleMatchingKeys
      )
        throw error;
      if (error instanceof errors.JOSENotSupported) throw error;
      // Anything else is about fetching the keys (network, status, body): not a verdict.
      throw identityUnavailable(error);
    }
  };
}

async function discoverJwksUri(issuer: string, timeoutMs: number): Promise<string> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'error',
  });
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
  if (metadata.issuer !== issuer)
    throw new Error(`discovery names issuer ${String(metadata.issuer)}`);
  if (typeof metadata.jwks_uri !== 'string') throw new Error('discovery has no jwks_uri');
  return metadata.jwks_uri;
}
