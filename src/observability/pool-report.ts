import type { BackendState } from '../domain/backends.ts';

/** One backend of a pool as operators read it (`/readyz`, `Model.backends` for admins). */
export interface BackendReport {
  readonly name: string;
  readonly engine: string;
  /** `up`: in rotation; `down`: out until its probe answers (or its cooldown ends). */
  readonly state: 'up' | 'down';
  /** Runs holding one of its slots now, across every worker. */
  readonly inFlight: number;
  /** Its cap (`maxConcurrent`); null: unlimited. */
  readonly maxConcurrent: number | null;
  readonly priority: number;
  readonly weight: number;
  /** Retryable failures in a row (no answer, 5xx, 429); 0 after a run it answered. */
  readonly failures: number;
  /** While down: when its next probe is due. */
  readonly downUntil: string | null;
  /** The last failure's class and detail, secrets already removed. */
  readonly lastError: string | null;
  /** When it last went down or came back. */
  readonly changedAt: string;
}

/** A model's pool: its backends, its queue, and the state a caller sees. */
export interface PoolReport {
  readonly modelId: string;
  /** `up`: every backend in rotation; `degraded`: some out; `down`: all out (maintenance). */
  readonly status: 'up' | 'degraded' | 'down';
  /** Tasks waiting in Atelier's queue for a slot of this pool. */
  readonly queued: number;
  readonly inFlight: number;
  /** Slots of its backends in rotation; null when one of them is unlimited. */
  readonly capacity: number | null;
  readonly backends: readonly BackendReport[];
}

/** Groups backends' states (ordered by model) into one report per pool. */
export function poolReports(states: readonly BackendState[]): PoolReport[] {
  const byModel = new Map<string, BackendState[]>();
  for (const state of states) {
    const pool = byModel.get(state.modelId);
    if (pool === undefined) byModel.set(state.modelId, [state]);
    else pool.push(state);
  }
  return [...byModel.entries()].map(([modelId, pool]) => {
    const up = pool.filter((b) => b.state === 'up');
    return {
      modelId,
      status: up.length === pool.length ? 'up' : up.length === 0 ? 'down' : 'degraded',
      queued: pool[0]?.queued ?? 0,
      inFlight: pool.reduce((sum, b) => sum + b.inFlight, 0),
      capacity: up.some((b) => b.maxConcurrent === null)
        ? null
        : up.reduce((sum, b) => sum + (b.maxConcurrent ?? 0), 0),
      backends: pool.map(backendReport),
    };
  });
}

export function backendReport(b: BackendState): BackendReport {
  return {
    name: b.name,
    engine: b.engine,
    state: b.state,
    inFlight: b.inFlight,
    maxConcurrent: b.maxConcurrent,
    priority: b.priority,
    weight: b.weight,
    failures: b.failures,
    downUntil: b.downUntil?.toISOString() ?? null,
    lastError: b.lastError,
    changedAt: b.changedAt.toISOString(),
  };
}
