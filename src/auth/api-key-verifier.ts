import type { AccountRole, AccountStatus } from '../domain/actor.ts';
import type { CredentialEvent, CredentialEvents } from '../events/credential-events.ts';
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

/** Compared against when no key has the hash, so an unknown key costs what a known one does. */
const noSuchHash = '0'.repeat(64);

export interface ApiKeyVerifierOptions {
  db: Db;
  clock: Clock;
  /** Revocations and account changes from every node; the cache is off while it is not live. */
  changes: Pick<CredentialEvents, 'subscribe' | 'live'>;
  /** How long a found key is trusted without a database read, should a change go unheard. */
  cacheTtlMs?: number;
  /** Bound on cached keys; the oldest entry goes first. */
  cacheSize?: number;
  /** `last_used_at` is written at most this often per key, to keep reads read-only. */
  touchIntervalMs?: number;
}

/**
 * Checks API keys: shape and checksum first (no I/O), then the hash against the database.
 * Valid keys are cached briefly, with the account's status and role, so a request with a known
 * key costs no query. Every node hears every revocation and account change ({@link
 * CredentialEvents}) and forgets the entries concerned before its next request; while it
 * cannot hear them (the LISTEN connection is down) it neither reads nor fills the cache.
 *
 * Only keys valid right now are ever answered from the cache: an expired, revoked or unknown
 * key takes the same path — one database lookup, one constant-time comparison — so neither
 * the answer nor its time tells them apart.
 */
export class ApiKeyVerifier {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #changes: ApiKeyVerifierOptions['changes'];
  readonly #ttlMs: number;
  readonly #size: number;
  readonly #cache = new Map<string, CachedKey>();
  readonly #touches: IntervalGate;
  /**
   * Bumped by every change heard and every liveness change. A lookup remembers it before
   * reading the database and stores its row only if it has not moved: a request that read a
   * key just before its revocation committed would otherwise put it back into the cache after
   * the eviction arrived, and serve it for a whole TTL. The notification is sent after the
   * commit, and the commit after that read began, so it always bumps the epoch in between.
   */
  #epoch = 0;

  constructor(options: ApiKeyVerifierOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#changes = options.changes;
    this.#ttlMs = options.cacheTtlMs ?? 10_000; // 10 seconds
    this.#size = options.cacheSize ?? 10_000;
    this.#touches = new IntervalGate(options.touchIntervalMs ?? 60_000, this.#size); // 1 minute
    this.#changes.subscribe((event) => this.#hear(event));
  }

  /**
   * The key's identity if it may authorize a call now; `null` if malformed, unknown, expired or
   * revoked. Throws a 100102 AppError when the database cannot be asked.
   */
  async verify(secret: string): Promise<VerifiedApiKey | null> {
    if (!isWellFormedApiKey(secret)) return null;
    const hash = hashApiKey(secret);
    const now = this.#clock.now();
    const key = this.#fromCache(hash, now.getTime()) ?? (await this.#load(hash, now));
    if (key === null) return null;
    await this.#touch(key.apiKeyId, now);
    return {
      apiKeyId: key.apiKeyId,
      accountId: key.accountId,
      accountStatus: key.accountStatus,
      accountRole: key.accountRole,
    };
  }

  #hear(event: CredentialEvent): void {
    this.#epoch += 1;
    if (event.type === 'delivery') {
      // Changes sent while deaf are lost: nothing cached before the gap can be trusted.
      this.#cache.clear();
      return;
    }
    for (const [hash, key] of this.#cache) {
      if (
        event.type === 'api_key_revoked'
          ? key.apiKeyId === event.apiKeyId
          : key.accountId === event.accountId
      )
        this.#cache.delete(hash);
    }
  }

  /** A cached key valid right now; anything else (stale, expired, deaf) goes to the database. */
  #fromCache(hash: string, nowMs: number): CachedKey | undefined {
    if (!this.#changes.live) return undefined;
    const hit = this.#cache.get(hash);
    if (hit === undefined) return undefined;
    if (nowMs - hit.cachedAt < this.#ttlMs && !expired(hit.expiresAt, nowMs)) return hit;
    this.#cache.delete(hash);
    return undefined;
  }

  async #load(hash: string, now: Date): Promise<CachedKey | null> {
    const epoch = this.#epoch;
    const row = await lookUpCredential(() => findApiKeyByHash(this.#db, hash));
    // The lookup was by hash already; the comparison is made anyway, against a stand-in for a
    // missing row, so an unknown key and a known one cost the same.
    const matches = constantTimeEqual(row?.secret_hash ?? noSuchHash, hash);
    if (row === undefined || !matches || row.revoked_at !== null) return null;
    if (expired(row.expires_at, now.getTime())) return null;
    const key: CachedKey = {
      apiKeyId: row.id,
      accountId: row.account_id,
      accountStatus: row.account_status,
      accountRole: row.account_role,
      secretHash: row.secret_hash,
      expiresAt: row.expires_at,
      cachedAt: now.getTime(),
    };
    // Misses are never cached (a key created a moment ago on another node must work at once).
    if (this.#changes.live && epoch === this.#epoch) this.#remember(hash, key);
    return key;
  }

  #remember(hash: string, key: CachedKey): void {
    if (this.#cache.size >= this.#size) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(hash, key);
  }

  async #touch(apiKeyId: string, now: Date): Promise<void> {
    if (this.#touches.pass(apiKeyId, now.getTime()))
      await lookUpCredential(() => touchApiKey(this.#db, apiKeyId, now));
  }
}

function expired(expiresAt: Date | null, nowMs: number): boolean {
  return expiresAt !== null && expiresAt.getTime() <= nowMs;
}
