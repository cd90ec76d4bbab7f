import type { Clock } from '../shared/clock.ts';
import type { Db } from '../store/database.ts';
import { hitWindow, sweepWindows, type WindowHit } from '../store/rate-limit.store.ts';

/** Fixed rate-limit windows: in this process's memory, or shared through PostgreSQL or Redis. */
export interface RateLimitWindows {
  /**
   * Adds `hits` to `key` (0 reads without counting) and answers the total so far in the
   * window; a window of `windowMs` starts with the first hit.
   */
  hit(key: string, windowMs: number, hits: number): Promise<WindowHit>;
}

/**
 * Rate-limit windows kept in the database, so every node counts the same hits: what a
 * deployment with several API nodes needs (one node alone counts in memory instead). Windows
 * that ended are swept at most once a minute per process.
 */
export class DatabaseRateLimitWindows implements RateLimitWindows {
  readonly #db: Db;
  readonly #clock: Clock;
  #sweptAt = 0;

  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async hit(key: string, windowMs: number, hits: number): Promise<WindowHit> {
    const counted = await hitWindow(this.#db, key, windowMs, hits);
    const now = this.#clock.now().getTime();
    if (now - this.#sweptAt > 60_000) {
      this.#sweptAt = now;
      await sweepWindows(this.#db, windowMs).catch(() => {});
    }
    return counted;
  }
}

/** Keys one node remembers at most: the least recently counted go first beyond this. */
const maxMemoryKeys = 100_000;

/**
 * Rate-limit windows in this process (one node alone), on the clock port so tests can end a
 * window without waiting. A Map keeps insertion order: a key is moved to the end when counted,
 * so the first entries are the least recently used and the ones dropped when it is full.
 */
export class MemoryRateLimitWindows implements RateLimitWindows {
  readonly #clock: Clock;
  readonly #windows = new Map<string, { hits: number; resetAt: number }>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  async hit(key: string, windowMs: number, hits: number): Promise<WindowHit> {
    const now = this.#clock.now().getTime();
    const found = this.#windows.get(key);
    // A read of a key never counted creates nothing: reads must not push real counts out.
    if (hits === 0 && (found === undefined || found.resetAt <= now))
      return { hits: 0, ttlMs: windowMs };
    const window =
      found === undefined || found.resetAt <= now ? { hits: 0, resetAt: now + windowMs } : found;
    window.hits += hits;
    this.#windows.delete(key);
    this.#windows.set(key, window);
    if (this.#windows.size > maxMemoryKeys) {
      const oldest = this.#windows.keys().next();
      if (!oldest.done) this.#windows.delete(oldest.value);
    }
    return { hits: window.hits, ttlMs: window.resetAt - now };
  }
}
