import { type JSONWebKeySet, SignJWT } from 'jose';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { findAccount } from '../store/account.store.ts';
import type { Db } from '../store/database.ts';
import { linkIdentity } from '../store/identity.store.ts';
import {
  linkIdpUsersUnder,
  recordedIdpIssuer,
  recordIdpIssuer,
} from '../store/idp-issuer.store.ts';
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
  /** The issuer the sign-in is linked under: this data store's, whatever `PUBLIC_URL` says. */
  readonly issuer: string;
}

const tokenLifetimeSeconds = 3_600; // 1 hour
const algorithm = 'RS256';

/**
 * The identity provider a fresh install has: local users (email + argon2id password) linked
 * to accounts, issuing 1-hour RS256 ID tokens with its own key, kept in the database so every
 * node signs and verifies alike. Its tokens are verified by the same code as any issuer's.
 *
 * Its issuer is recorded in the data store on the first start and kept from then on, whatever
 * `PUBLIC_URL` a later process has: identities are keyed by (issuer, subject), so an issuer that
 * followed each process's settings linked a user added from a command line without the
 * server's `PUBLIC_URL` to an issuer the server never names, and that person's sign-in opened a
 * new, empty account (issue 18).
 */
export class BuiltinIdentityProvider {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #keys: SigningKeys;
  readonly #publicUrl: string;
  /** This data store's issuer: what tokens carry and what verification expects. */
  readonly issuer: string;
  readonly audience: string;

  private constructor(o: {
    db: Db;
    clock: Clock;
    issuer: string;
    audience: string;
    publicUrl: string;
    keys: SigningKeys;
  }) {
    this.#db = o.db;
    this.#clock = o.clock;
    this.issuer = o.issuer;
    this.audience = o.audience;
    this.#publicUrl = o.publicUrl;
    this.#keys = o.keys;
  }

  /**
   * Loads the signing keys, creating the first on the very first start, and this data store's
   * issuer. A server (`records`) records its `proposedIssuer` (`PUBLIC_URL/idp`) when none is
   * yet, and links every built-in user under the recorded one (see `linkIdpUsersUnder`).
   * Workers and operator commands only read the record — their `PUBLIC_URL` is often not the
   * deployment's — and use `proposedIssuer` while there is none; the first server's start then
   * links the users they added under its own.
   */
  static async open(o: {
    db: Db;
    clock: Clock;
    proposedIssuer: string;
    audience: string;
    /** Where this server answers now (`PUBLIC_URL`): its endpoints are published there. */
    publicUrl: string;
    /** Whether this process is a server, which records the issuer. */
    records: boolean;
  }): Promise<BuiltinIdentityProvider> {
    // Tokens live an hour; a retired key stays published a day.
    const keys = await SigningKeys.open(o.db, 'idp-signing-keys', 86_400_000, o.clock);
    let issuer: string;
    if (o.records) {
      issuer = await recordIdpIssuer(o.db, o.proposedIssuer);
      await linkIdpUsersUnder(o.db, issuer);
    } else {
      issuer = (await recordedIdpIssuer(o.db)) ?? o.proposedIssuer;
    }
    return new BuiltinIdentityProvider({ ...o, issuer, keys });
  }

  /** Keys that verify its tokens (same path as any issuer: jose, issuer, audience, expiry). */
  verificationKeys() {
    return this.#keys.verificationKeys();
  }

  /** The public signing keys (`/idp/jwks`). */
  get jwks(): JSONWebKeySet {
    return this.#keys.jwks;
  }

  /**
   * OpenID Provider metadata: enough for any relying party to find the keys. The issuer is the
   * recorded one, since tokens carry it; the endpoints are where this server answers now. The
   * two differ once a deployment has moved (or its store was first opened by a command line
   * without the server's `PUBLIC_URL`), and the recorded issuer's address may then reach no
   * server at all: a URL made from it would publish keys nobody can fetch. Atelier verifies its
   * own tokens with the keys in memory and never discovers this document, so it is unaffected;
   * a relying party that discovers by issuer needs the two to agree (`serve` warns when not).
   */
  discovery(): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: `${this.#publicUrl}/idp/jwks`,
      sign_in_endpoint: `${this.#publicUrl}/idp/sign-in`,
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
    return { id, accountId: input.accountId, email, issuer: this.issuer };
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
