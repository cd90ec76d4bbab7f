import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import type { Clock } from '../shared/clock.ts';
import type { Db } from '../store/database.ts';
import { sharedValue } from '../store/secret.store.ts';

const algorithm = 'RS256';

interface StoredKey {
  readonly jwk: JWK;
  /** When it started signing (ISO). */
  readonly since: string;
}

interface LoadedKeys {
  readonly signing: { readonly key: CryptoKey; readonly kid: string };
  readonly jwks: JSONWebKeySet;
  /** The public keys, each imported once on first use (jose keeps them per key set). */
  readonly verify: JWTVerifyGetKey;
}

/**
 * RS256 keys kept in the database (`server_secrets`), so every node and every restart sign and
 * verify alike. The newest key signs; older ones stay published for verification until the
 * tokens they signed have expired (`retainMs` after they stopped signing), then they go.
 */
export class SigningKeys {
  readonly #db: Db;
  readonly #name: string;
  readonly #retainMs: number;
  readonly #clock: Clock;
  #loaded: LoadedKeys;
  #lastReload = 0;

  private constructor(db: Db, name: string, retainMs: number, clock: Clock, loaded: LoadedKeys) {
    this.#db = db;
    this.#clock = clock;
    this.#name = name;
    this.#retainMs = retainMs;
    this.#loaded = loaded;
  }

  /** Loads the keys named `name`, creating the first on the very first start. */
  static async open(db: Db, name: string, retainMs: number, clock: Clock): Promise<SigningKeys> {
    const stored = await sharedValue(db, name, async () =>
      JSON.stringify([await newKey(clock.now())]),
    );
    const loaded = await load(JSON.parse(stored) as StoredKey[]);
    return new SigningKeys(db, name, retainMs, clock, loaded);
  }

  get signingKey(): { readonly key: CryptoKey; readonly kid: string } {
    return this.#loaded.signing;
  }

  /** The public keys, without any private part (`/oauth/jwks`, `/idp/jwks`). */
  get jwks(): JSONWebKeySet {
    return this.#loaded.jwks;
  }

  /**
   * Keys for verification. A token naming a kid this process does not know yet (another node
   * rotated) reloads from the database, at most every 30 seconds.
   */
  verificationKeys(): JWTVerifyGetKey {
    return async (header, token) => {
      const known = this.#loaded.jwks.keys.some((k) => k.kid === header.kid);
      if (!known && this.#clock.now().getTime() - this.#lastReload > 30_000) await this.reload();
      return this.#loaded.verify(header, token);
    };
  }

  async reload(): Promise<void> {
    this.#lastReload = this.#clock.now().getTime();
    const row = await this.#db
      .selectFrom('server_secrets')
      .select('value')
      .where('name', '=', this.#name)
      .executeTakeFirstOrThrow();
    this.#loaded = await load(JSON.parse(row.value) as StoredKey[]);
  }

  /** Adds a new signing key; keys retired longer than `retainMs` ago are dropped. */
  async rotate(): Promise<string> {
    const fresh = await newKey(this.#clock.now());
    await this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('server_secrets')
        .select('value')
        .where('name', '=', this.#name)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const keys = JSON.parse(row.value) as StoredKey[];
      const now = this.#clock.now().getTime();
      // A key retires when its successor starts signing; keep it while its tokens may live.
      const kept = keys.filter((_key, i) => {
        const retiredAt = Date.parse(keys[i + 1]?.since ?? new Date(now).toISOString());
        return now - retiredAt < this.#retainMs;
      });
      await trx
        .updateTable('server_secrets')
        .set({ value: JSON.stringify([...kept, fresh]) })
        .where('name', '=', this.#name)
        .execute();
    });
    await this.reload();
    return fresh.jwk.kid!;
  }
}

async function newKey(since: Date): Promise<StoredKey> {
  const { privateKey } = await generateKeyPair(algorithm, {
    modulusLength: 2048,
    extractable: true,
  });
  const jwk = await exportJWK(privateKey);
  return {
    jwk: { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: algorithm, use: 'sig' },
    since: since.toISOString(),
  };
}

async function load(keys: readonly StoredKey[]): Promise<LoadedKeys> {
  const newest = keys.at(-1)!;
  const publicKeys = keys.map(({ jwk }) => {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = jwk;
    return publicJwk;
  });
  const key = (await importJWK(newest.jwk, algorithm)) as CryptoKey;
  const jwks = { keys: publicKeys };
  return { signing: { key, kid: newest.jwk.kid! }, jwks, verify: createLocalJWKSet(jwks) };
}
