import { errors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../shared/clock.ts';
import { randomBase62 } from '../../shared/ids.ts';
import { IntervalGate } from '../../shared/interval-gate.ts';
import { sha256Hex } from '../../shared/secrets.ts';
import type { Db, Queryable } from '../../store/database.ts';
import { findTokenWithAccount, insertToken, touchConnection } from '../../store/oauth.store.ts';
import { accountOutcome } from '../authenticate.ts';
import { lookUpCredential } from '../credentials-unavailable.ts';
import type { SigningKeys } from '../signing-keys.ts';

export const accessTokenLifetimeSeconds = 7 * 86_400; // spec §5.4, §8: seven days
/** Clock skew between the nodes that issue and check tokens. */
const clockToleranceSeconds = 30;
/** How many tokens' signature checks are remembered (about 1 KiB each). */
const verifiedSignaturesKept = 1_000;

/** Who a valid MCP access token speaks for. */
export interface McpPrincipal {
  readonly accountId: string;
  readonly role: 'user' | 'admin';
  readonly clientId: string;
  readonly scope: string;
  readonly jti: string;
  /**
   * The account as read with the token, in the same query: its alias and balances by category
   * at the moment this request was authenticated (read anew for every request, never kept).
   */
  readonly account: {
    readonly alias: string;
    readonly creditBalances: readonly { category: string; amount: number }[];
  };
}

/** Why a bearer token was refused, in RFC 6750 terms. */
export class BearerError extends Error {
  override readonly name = 'BearerError';
  readonly error: 'invalid_token' | 'insufficient_scope';
  readonly status: 401 | 403;

  constructor(error: 'invalid_token' | 'insufficient_scope', description: string) {
    super(description);
    this.error = error;
    this.status = error === 'invalid_token' ? 401 : 403;
  }
}

/**
 * MCP access tokens: RS256 JWTs (`typ: at+jwt`, RFC 9068) for one resource, stored by `jti` so a
 * revocation takes effect before expiry. No refresh tokens (spec §5.4).
 */
export interface AccessTokensOptions {
  db: Db;
  keys: SigningKeys;
  issuer: string;
  resource: string;
  scope: string;
  clock: Clock;
}

export class AccessTokens {
  readonly #o: AccessTokensOptions;
  /** `last_used_at` of a connection is written at most once a minute, not on every request. */
  readonly #uses = new IntervalGate(60_000);
  /**
   * Tokens whose signature and fixed claims passed, by SHA-256 of the token, with the key set
   * that passed them. The RSA check was the largest cost of an MCP request, and its outcome
   * cannot change while the keys stay the same. The time claims, the stored token (revocation)
   * and the account are still checked on every request. Oldest out first.
   */
  readonly #verified = new Map<string, { claims: JWTPayload; keys: object }>();

  constructor(options: AccessTokensOptions) {
    this.#o = options;
  }

  /** Signs a token and stores it through `q` (the code exchange's transaction). */
  async issue(
    grant: { accountId: string; clientId: string; scope: string; codeHash: string },
    q: Queryable = this.#o.db,
  ): Promise<string> {
    const now = Math.floor(this.#o.clock.now().getTime() / 1000);
    const jti = randomBase62(24);
    const { key, kid } = this.#o.keys.signingKey;
    const token = await new SignJWT({ client_id: grant.clientId, scope: grant.scope })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
      .setIssuer(this.#o.issuer)
      .setAudience(this.#o.resource)
      .setSubject(grant.accountId)
      .setJti(jti)
      .setIssuedAt(now)
      .setExpirationTime(now + accessTokenLifetimeSeconds)
      .sign(key);
    await insertToken(q, {
      jti,
      clientId: grant.clientId,
      accountId: grant.accountId,
      scope: grant.scope,
      resource: this.#o.resource,
      codeHash: grant.codeHash,
      expiresAt: new Date((now + accessTokenLifetimeSeconds) * 1000),
    });
    return token;
  }

  /**
   * Spec §5.4 rule 2: signature (RS256), issuer, audience = the resource, expiry, scope, the
   * stored token (revoked means refused before expiry) and an active account. Throws a
   * {@link BearerError}, or a 100102 AppError when the database cannot be asked.
   */
  async verify(token: string): Promise<McpPrincipal> {
    const claims = await this.#claims(token);
    const { db } = this.#o;
    const stored = await lookUpCredential(() => findTokenWithAccount(db, String(claims.jti)));
    // Signed by our keys yet never stored (a database restored from before it): not ours now.
    if (stored === undefined) throw invalidToken();
    if (stored.revoked_at !== null)
      throw new BearerError('invalid_token', 'The access token was revoked.');
    if (new Date(stored.expires_at).getTime() <= this.#o.clock.now().getTime())
      throw invalidToken();
    const account =
      stored.account_status === null || stored.account_role === null
        ? undefined
        : { id: stored.account_id, status: stored.account_status, role: stored.account_role };
    // The same rule as every other credential; RFC 6750 has one word for all its refusals.
    const outcome = accountOutcome(account, {
      kind: 'mcp_token',
      clientId: stored.client_id,
    });
    if (outcome.kind !== 'actor') throw new BearerError('invalid_token', outcome.error.message);
    if (
      this.#uses.pass(`${stored.account_id} ${stored.client_id}`, this.#o.clock.now().getTime())
    ) {
      await lookUpCredential(() => touchConnection(db, stored.account_id, stored.client_id));
    }
    return {
      accountId: stored.account_id,
      role: outcome.actor.role,
      clientId: stored.client_id,
      scope: stored.scope,
      jti: stored.jti,
      account: { alias: stored.account_alias!, creditBalances: stored.balances },
    };
  }

  /** The token's claims once its signature, issuer, audience, type, scope and times pass. */
  async #claims(token: string): Promise<JWTPayload> {
    const now = this.#o.clock.now();
    const digest = sha256Hex(token);
    const keys = this.#o.keys.jwks;
    const known = this.#verified.get(digest);
    if (known !== undefined && known.keys === keys) {
      if (!timely(known.claims, now.getTime() / 1000)) throw invalidToken();
      return known.claims;
    }
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, this.#o.keys.verificationKeys(), {
        issuer: this.#o.issuer,
        audience: this.#o.resource,
        algorithms: ['RS256'],
        typ: 'at+jwt',
        requiredClaims: ['sub', 'jti', 'exp', 'iat', 'client_id'],
        // With a maximum age, jose also refuses an `iat` in the future beyond the tolerance.
        maxTokenAge: accessTokenLifetimeSeconds,
        clockTolerance: clockToleranceSeconds,
        currentDate: now,
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError) throw invalidToken();
      throw error;
    }
    // jose accepts an `aud` array that merely contains the resource; a token meant for several
    // audiences is not one of ours (RFC 9068 §4: the resource is the audience).
    if (!audienceIsExactly(claims.aud, this.#o.resource)) throw invalidToken();
    const scopes = String(claims.scope ?? '').split(' ');
    if (!scopes.includes(this.#o.scope))
      throw new BearerError('insufficient_scope', `The token lacks the ${this.#o.scope} scope.`);
    if (this.#verified.size >= verifiedSignaturesKept)
      this.#verified.delete(this.#verified.keys().next().value!);
    // Filed under the key set read before the check: a reload meanwhile (a key withdrawn)
    // brings a new object, under which this token is checked again on its next request.
    this.#verified.set(digest, { claims, keys });
    return claims;
  }
}

const invalidToken = () => new BearerError('invalid_token', 'The access token is not valid.');

/**
 * jose's time rules for a token it already passed, at `now` (seconds): not expired, not too
 * old, not yet valid, issued in the past — each with the clock tolerance.
 */
function timely(claims: JWTPayload, now: number): boolean {
  const { exp, iat, nbf } = claims as { exp: number; iat: number; nbf?: number };
  const age = now - iat;
  return (
    exp > now - clockToleranceSeconds &&
    age - clockToleranceSeconds <= accessTokenLifetimeSeconds &&
    age >= -clockToleranceSeconds &&
    (nbf === undefined || nbf <= now + clockToleranceSeconds)
  );
}

function audienceIsExactly(aud: unknown, resource: string): boolean {
  return aud === resource || (Array.isArray(aud) && aud.length === 1 && aud[0] === resource);
}
