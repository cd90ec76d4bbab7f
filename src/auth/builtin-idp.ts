import { type JSONWebKeySet, SignJWT } from 'jose';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { findAccount } from '../store/account.store.ts';
import type { Db } from '../store/database.ts';
import { linkIdentity } from '../store/identity.store.ts';
import { lookUpCredential } from './credentials-unavailable.ts';
import { decoyHash, hashPassword, verifyPassword } from './password.ts';
import { SigningKeys } from './signing-keys.ts';

export interface SignedIn {
  readonly idToken: string;
  readonly expiresAt: Date;
}

export interface IdpUser {
  readonly id: string;
  readonly accountId: string;
  readonly email: string;
}

const tokenLifetimeSeconds = 3_600; // 1 hour
const algorithm = 'RS256';

/**
 * The identity provider a fresh install has: local users (email + argon2id password) linked
 * to accounts, issuing 1-hour RS256 ID tokens with its own key, kept in the database so every
 * node signs and verifies alike. Its tokens are verified by the same code as any issuer's.
 */
export class BuiltinIdentityProvider {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #keys: SigningKeys;
  readonly issuer: string;
  readonly audience: string;

  private constructor(o: {
    db: Db;
    clock: Clock;
    issuer: string;
    audience: string;
    keys: SigningKeys;
  }) {
    this.#db = o.db;
    this.#clock = o.clock;
    this.issuer = o.issuer;
    this.audience = o.audience;
    this.#keys = o.keys;
  }

  /** Loads the signing keys, creating the first on the very first start. */
  static async open(o: {
    db: Db;
    clock: Clock;
    issuer: string;
    audience: string;
  }): Promise<BuiltinIdentityProvider> {
    // Tokens live an hour; a retired key stays published a day.
    const keys = await SigningKeys.open(o.db, 'idp-signing-keys', 86_400_000, o.clock);
    return new BuiltinIdentityProvider({ ...o, keys });
  }

  /** Keys that verify its tokens (same path as any issuer: jose, issuer, audience, expiry). */
  verificationKeys() {
    return this.#keys.verificationKeys();
  }

  /** The public signing keys (`/idp/jwks`). */
  get jwks(): JSONWebKeySet {
    return this.#keys.jwks;
  }

  /** OpenID Provider metadata: enough for any relying party to find the keys. */
  discovery(): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: `${this.issuer}/jwks`,
      sign_in_endpoint: `${this.issuer}/sign-in`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [algorithm],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'email'],
    };
  }

  /** Links a new sign-in (email + password) to an existing account. */
  async addUser(input: { accountId: string; email: string; password: string }): Promise<IdpUser> {
    const email = input.email.trim().toLowerCase();
    const problems = [];
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254)
      problems.push({ field: 'email', message: 'is not an email address' });
    if (input.password.length < 10 || input.password.length > 256) {
      problems.push({ field: 'password', message: 'must be 10 to 256 characters' });
    }
    if (problems.length > 0) throw invalidInput(problems);
    if ((await findAccount(this.#db, input.accountId)) === undefined) {
      throw new AppError(ErrorCode.NotFound, 'No such account.', { field: 'account' });
    }
    const passwordHash = await hashPassword(input.password);
    const id = newId('usr');
    await this.#db.transaction().execute(async (trx) => {
      const taken = await trx
        .selectFrom('idp_users')
        .select('id')
        .where('email', '=', email)
        .executeTakeFirst();
      if (taken !== undefined)
        throw invalidInput([{ field: 'email', message: 'already has a sign-in' }]);
      await trx
        .insertInto('idp_users')
        .values({ id, account_id: input.accountId, email, password_hash: passwordHash })
        .execute();
      await linkIdentity(trx, {
        issuer: this.issuer,
        subject: id,
        accountId: input.accountId,
        email,
      });
    });
    return { id, accountId: input.accountId, email };
  }

  /**
   * An ID token for a right email and password. Every failure — unknown email or wrong
   * password — gets the same error after the same work (a decoy hash is verified for unknown
   * users), so sign-in reveals nothing about who has an account.
   */
  async signIn(email: string, password: string): Promise<SignedIn> {
    const user = await lookUpCredential(() =>
      this.#db
        .selectFrom('idp_users')
        .select(['id', 'email', 'password_hash'])
        .where('email', '=', email.trim().toLowerCase())
        .executeTakeFirst(),
    );
    const ok = await verifyPassword(user?.password_hash ?? (await decoyHash), password);
    if (user === undefined || !ok) {
      throw new AppError(ErrorCode.Unauthenticated, 'Wrong email or password.');
    }
    const now = Math.floor(this.#clock.now().getTime() / 1000);
    const idToken = await new SignJWT({ email: user.email })
      .setProtectedHeader({ alg: algorithm, kid: this.#keys.signingKey.kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(user.id)
      .setAudience(this.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + tokenLifetimeSeconds)
      .sign(this.#keys.signingKey.key);
    return { idToken, expiresAt: new Date((now + tokenLifetimeSeconds) * 1000) };
  }
}
