import type { Db } from '../store/database.ts';
import { hitWindow, sweepWindows, type WindowHit } from '../store/rate-limit.store.ts';

/** Fixed rate-limit windows that every node counts in: PostgreSQL or Redis. */
export interface SharedWindows {
  /** Counts one hit on `key`; a window of `windowMs` starts with the first. */
  hit(key: string, windowMs: number): Promise<WindowHit>;
}

/**
 * Rate-limit windows kept in the database, so every node counts the same hits: what a
 * deployment with several API nodes needs (one node alone counts in memory instead). Windows
 * that ended are swept at most once a minute per process.
 */
export class DatabaseRateLimitWindows implements SharedWindows {
  readonly #db: Db;
  #sweptAt = 0;

  constructor(db: Db) {
    this.#db = db;
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
    const counted = await hitWindow(this.#db, key, windowMs);
    const now = Date.now();
    if (now - this.#sweptAt > 60_000) {
      this.#sweptAt = now;
      await sweepWindows(this.#db, windowMs).catch(() => {});
    }
    return counted;
  }
}
