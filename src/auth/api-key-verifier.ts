import type { AccountRole, AccountStatus } from '../domain/actor.ts';
import type { Clock } from '../shared/clock.ts';
import { IntervalGate } from '../shared/interval-gate.ts';
import { constantTimeEqual } from '../shared/secrets.ts';
import { findApiKeyByHash, touchApiKey } from '../store/api-key.store.ts';
import type { Db } from '../store/database.ts';
import { hashApiKey, isWellFormedApiKey } from './api-key.ts';
import { lookUpCredential } from './credentials-unavailable.ts';

/** A key that may authorize a call right now, and the state of its account. */
export interface VerifiedApiKey {
  readonly apiKeyId: string;
  readonly accountId: string;
  readonly accountStatus: AccountStatus;
  readonly accountRole: AccountRole;
}

interface CachedKey extends VerifiedApiKey {
  readonly secretHash: string;
  readonly expiresAt: Date | null;
  readonly cachedAt: number;
}

export interface ApiKeyVerifierOptions {
  db: Db;
  clock: Clock;
  /** How long a found key is trusted without a database read. */
  cacheTtlMs?: number;
  /** Bound on cached keys; the oldest entry goes first. */
  cacheSize?: number;
  /** `last_used_at` is written at most this often per key, to keep reads read-only. */
  touchIntervalMs?: number;
}

/**
 * Checks API keys: shape and checksum first (no I/O), then the hash against the database.
 * Hits are cached briefly, with the account's status and role, so a request with a known key
 * costs no query. A revocation or an account change on this node evicts at once
 * ({@link evict}, {@link evictAccount}), and expiry is checked against the cached expiry at
 * every call, so none of them waits for the TTL. Another node sees a revocation or a
 * suspension when its cache entry ages out (at most `cacheTtlMs`).
 */
export class ApiKeyVerifier {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #size: number;
  readonly #cache = new Map<string, CachedKey>();
  readonly #touches: IntervalGate;

  constructor(options: ApiKeyVerifierOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#ttlMs = options.cacheTtlMs ?? 10_000; // 10 seconds
    this.#size = options.cacheSize ?? 10_000;
    this.#touches = new IntervalGate(options.touchIntervalMs ?? 60_000, this.#size); // 1 minute
  }

  /**
   * The key's identity if it may authorize a call now; `null` if malformed, unknown, expired or
   * revoked. Throws a 100102 AppError when the database cannot be asked.
   */
  async verify(secret: string): Promise<VerifiedApiKey | null> {
    if (!isWellFormedApiKey(secret)) return null;
    const hash = hashApiKey(secret);
    const now = this.#clock.now();
    const key = this.#fromCache(hash, now.getTime()) ?? (await this.#load(hash, now.getTime()));
    if (key === null) return null;
    // The lookup was by hash already; comparing again in constant time costs nothing.
    if (!constantTimeEqual(key.secretHash, hash)) return null;
    if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return null;
    await this.#touch(key.apiKeyId, now);
    return {
      apiKeyId: key.apiKeyId,
      accountId: key.accountId,
      accountStatus: key.accountStatus,
      accountRole: key.accountRole,
    };
  }

  /** Forgets a key at once (revocation on this node). */
  evict(apiKeyId: string): void {
    this.#evictWhere((key) => key.apiKeyId === apiKeyId);
  }

  /** Forgets every key of an account at once (its status or role changed on this node). */
  evictAccount(accountId: string): void {
    this.#evictWhere((key) => key.accountId === accountId);
  }

  #evictWhere(matches: (key: CachedKey) => boolean): void {
    for (const [hash, key] of this.#cache) {
      if (matches(key)) this.#cache.delete(hash);
    }
  }

  #fromCache(hash: string, nowMs: number): CachedKey | undefined {
    const hit = this.#cache.get(hash);
    if (hit === undefined) return undefined;
    if (nowMs - hit.cachedAt < this.#ttlMs) return hit;
    this.#cache.delete(hash);
    return undefined;
  }

  async #load(hash: string, nowMs: number): Promise<CachedKey | null> {
    const row = await lookUpCredential(() => findApiKeyByHash(this.#db, hash));
    // Misses are not cached: a key created a moment ago on another node must work at once.
    if (row === undefined || row.revoked_at !== null) return null;
    const key: CachedKey = {
      apiKeyId: row.id,
      accountId: row.account_id,
      accountStatus: row.account_status,
      accountRole: row.account_role,
      secretHash: row.secret_hash,
      expiresAt: row.expires_at,
      cachedAt: nowMs,
    };
    if (this.#cache.size >= this.#size) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(hash, key);
    return key;
  }

  async #touch(apiKeyId: string, now: Date): Promise<void> {
    if (this.#touches.pass(apiKeyId, now.getTime()))
      await lookUpCredential(() => touchApiKey(this.#db, apiKeyId, now));
  }
}
