/**
 * Lets an action through at most once per interval per key — for bookkeeping writes such as
 * `last_used_at`, so a read path does not write on every request. Memory is bounded: past
 * `maxKeys` the record starts over (at worst one extra write per key).
 */
export class IntervalGate {
  readonly #last = new Map<string, number>();
  readonly #intervalMs: number;
  readonly #maxKeys: number;

  constructor(intervalMs: number, maxKeys = 10_000) {
    this.#intervalMs = intervalMs;
    this.#maxKeys = maxKeys;
  }

  /** True when `key` has not passed within the interval before `nowMs` (and records it). */
  pass(key: string, nowMs: number): boolean {
    const last = this.#last.get(key);
    if (last !== undefined && nowMs - last < this.#intervalMs) return false;
    if (this.#last.size >= this.#maxKeys) this.#last.clear();
    this.#last.set(key, nowMs);
    return true;
  }
}
