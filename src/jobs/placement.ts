import { type PoolBackend, poolOf } from '../domain/backends.ts';
import type { ModelDefinition } from '../domain/model.ts';
import type { Logger } from '../shared/logger.ts';
import type { ClaimedTask } from '../store/task-queue.store.ts';

/** A claimed task's run: where it runs and what it runs. */
export interface Placement {
  readonly model: ModelDefinition;
  /** The claimed backend of a pool; the model's one engine when the claim named none. */
  readonly backend: PoolBackend;
  /** Whether the claim holds a slot on a recorded backend (its runs are recorded). */
  readonly recorded: boolean;
  readonly poolSize: number;
}

/** Where claimed tasks run, from each model definition's pool. */
export class Placements {
  readonly #log: Logger;
  /** Each definition's pool; a reloaded catalogue's definitions are new objects. */
  readonly #pools = new WeakMap<ModelDefinition, readonly PoolBackend[]>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /**
   * Where a claimed task runs: the backend its claim holds a slot on, or, for a claim that
   * named none (a model without recorded backends), the model's first. A backend this node
   * does not know (its configuration differs) runs as the model's first too.
   */
  place(model: ModelDefinition, backendId: string | null): Placement {
    let pool = this.#pools.get(model);
    if (pool === undefined) {
      pool = poolOf(model);
      this.#pools.set(model, pool);
    }
    const claimed = backendId === null ? undefined : pool.find((b) => b.id === backendId);
    if (backendId !== null && claimed === undefined) {
      this.#log.warn(
        { modelId: model.modelId, backend: backendId },
        "a claim named a backend this node's MODELS does not have; running on the model's first",
      );
    }
    return {
      model,
      backend: claimed ?? pool[0]!,
      recorded: backendId !== null,
      poolSize: pool.length,
    };
  }
}

/**
 * Whether a run that failed for its backend's sake goes to another backend of its pool: when
 * the pool has another and the task has attempts left. Alone in its pool, a backend's failure
 * finishes the task, as it always did.
 */
export function failsOver(task: ClaimedTask['task'], placement: Placement | undefined): boolean {
  return placement !== undefined && placement.poolSize > 1 && task.attempts < task.max_attempts;
}
