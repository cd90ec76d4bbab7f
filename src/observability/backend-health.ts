import type { Clock } from '../shared/clock.ts';

/** What `/readyz` says about one model server a configured model calls. */
export interface BackendStatus {
  /** `${engine} ${origin}`, as in `/metrics`. */
  readonly backend: string;
  /**
   * Whether its last call got an answer, whatever its status (a 404 to a lookup is an answer
   * from a working server); null before the first call of this process.
   */
  readonly reachable: boolean | null;
  /** Whether its last call succeeded (a 2xx); null before the first call. */
  readonly lastOk: boolean | null;
  /** The HTTP status of its last call; null before the first, or when it got no answer. */
  readonly lastStatus: number | null;
  readonly calls: number;
  readonly failures: number;
  /** Of the last call, in ms; null before the first. */
  readonly lastLatencyMs: number | null;
  readonly lastCallAt: string | null;
}

interface Tally {
  calls: number;
  failures: number;
  last: { ok: boolean; status: number | null; ms: number; at: Date } | null;
}

/**
 * The calls of each model server in this process, for `/readyz`: every configured backend is
 * listed from the start (not called yet: `reachable: null`), then by its last outcome. A
 * backend's failures do not make the node unready — it still serves everything else, and a
 * provider outage fails only the tasks that need it.
 */
export class BackendHealth {
  readonly #clock: Clock;
  readonly #tallies = new Map<string, Tally>();

  constructor(configured: readonly string[], clock: Clock) {
    this.#clock = clock;
    this.track(configured);
  }

  /** Lists these model servers too, before any call (a reloaded catalogue's). */
  track(configured: readonly string[]): void {
    for (const backend of configured) this.#tally(backend);
  }

  record(backend: string, outcome: 'ok' | 'failed', ms: number, status: number | null): void {
    const tally = this.#tally(backend);
    tally.calls += 1;
    if (outcome === 'failed') tally.failures += 1;
    tally.last = { ok: outcome === 'ok', status, ms: Math.round(ms), at: this.#clock.now() };
  }

  snapshot(): BackendStatus[] {
    return [...this.#tallies.entries()].map(([backend, t]) => ({
      backend,
      reachable: t.last === null ? null : t.last.status !== null,
      lastOk: t.last === null ? null : t.last.ok,
      lastStatus: t.last?.status ?? null,
      calls: t.calls,
      failures: t.failures,
      lastLatencyMs: t.last?.ms ?? null,
      lastCallAt: t.last?.at.toISOString() ?? null,
    }));
  }

  #tally(backend: string): Tally {
    let tally = this.#tallies.get(backend);
    if (tally === undefined) {
      tally = { calls: 0, failures: 0, last: null };
      this.#tallies.set(backend, tally);
    }
    return tally;
  }
}
