import type { PoolBackend } from '../domain/backends.ts';
import type { Engine } from '../engines/engine.ts';
import type { Logger } from '../shared/logger.ts';
import {
  backendAnswered,
  backendBack,
  backendFailed,
  type HealthChange,
  probeFailed,
  takeDueChecks,
} from '../store/backend.store.ts';
import type { Db } from '../store/database.ts';

/** Time one probe may take (the probe's own bound is shorter; this one is the last word). */
const probeDeadlineMs = 15_000; // 15 seconds

/**
 * The health of the backends this node runs on, kept in the database for every node: runs
 * report how the backend did, probes check the ones that are due. A backend goes out of
 * rotation after its rule's count of retryable failures in a row, and comes back when a
 * probe answers (or, for an engine without one, when its cooldown is over: its next run is
 * the trial). Each change is logged and announced (`changed`), so every node's view of the
 * catalogue follows at once.
 *
 * Engines that run on the worker itself have no probe and no health: their failures are the
 * task's, not a server's.
 */
export class BackendHealthService {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #engines: ReadonlyMap<string, Engine>;
  #backends: ReadonlyMap<string, PoolBackend>;
  readonly #changed: () => Promise<void>;

  constructor(o: {
    db: Db;
    log: Logger;
    engines: ReadonlyMap<string, Engine>;
    backends: readonly PoolBackend[];
    changed: () => Promise<void>;
  }) {
    this.#db = o.db;
    this.#log = o.log;
    this.#engines = o.engines;
    this.#backends = new Map(o.backends.map((b) => [b.id, b]));
    this.#changed = o.changed;
  }

  /** The backends of a reloaded catalogue (`models reload`): those probed from now on. */
  replace(backends: readonly PoolBackend[]): void {
    this.#backends = new Map(backends.map((b) => [b.id, b]));
  }

  /** Whether runs on the backend count toward its health (its engine talks to a server). */
  tracks(backend: PoolBackend): boolean {
    return this.#engines.get(backend.engine)?.probe !== undefined;
  }

  /**
   * A run the backend answered: a success, or a failure of the work itself. Like
   * {@link failed}, it never throws: a health record that cannot be written (the database
   * away) is logged, and the run's own outcome is recorded all the same.
   */
  async answered(backend: PoolBackend): Promise<void> {
    if (!this.tracks(backend)) return;
    try {
      await this.#report(backend, await backendAnswered(this.#db, backend.id), null);
    } catch (error) {
      this.#log.warn({ err: error, backend: backend.id }, 'backend health not recorded');
    }
  }

  /** A run that failed for the backend's sake (no answer, an overloaded or failing server). */
  async failed(backend: PoolBackend, reason: string): Promise<void> {
    if (!this.tracks(backend)) return;
    try {
      const change = await backendFailed(this.#db, backend.id, backend.health, reason);
      await this.#report(backend, change, reason);
    } catch (error) {
      this.#log.warn({ err: error, backend: backend.id }, 'backend health not recorded');
    }
  }

  /** Probes the backends that are due (one node each), and brings back those that answer. */
  async checkDue(): Promise<void> {
    const due = await takeDueChecks(
      this.#db,
      [...this.#backends.values()].map((b) => ({
        id: b.id,
        rule: b.health,
        probes: this.tracks(b),
      })),
    );
    await Promise.all(due.map((check) => this.#check(check.id, check.state)));
  }

  async #check(id: string, state: 'up' | 'down'): Promise<void> {
    const backend = this.#backends.get(id);
    const probe = backend === undefined ? undefined : this.#engines.get(backend.engine)?.probe;
    if (backend === undefined) return;
    if (probe === undefined) {
      // No way to ask: the cooldown is over, and the next run is the trial.
      if (state === 'down' && (await backendBack(this.#db, id, false))) {
        this.#log.info({ backend: id }, 'backend back in rotation after its cooldown (on trial)');
        await this.#announce();
      }
      return;
    }
    let failure: string | null = null;
    try {
      await probe(backend.engineOptions, AbortSignal.timeout(probeDeadlineMs));
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    if (state === 'down') {
      if (failure === null) {
        if (await backendBack(this.#db, id, true)) {
          this.#log.info({ backend: id }, 'backend back in rotation: its probe answered');
          await this.#announce();
        }
      } else {
        await probeFailed(this.#db, id, failure);
        this.#log.warn({ backend: id, detail: failure }, 'backend still out: its probe failed');
      }
      return;
    }
    if (failure !== null) await this.failed(backend, `probe: ${failure}`);
  }

  async #report(
    backend: PoolBackend,
    change: HealthChange | undefined,
    reason: string | null,
  ): Promise<void> {
    if (change === undefined || !change.changed) return;
    if (change.state === 'down') {
      this.#log.warn(
        {
          backend: backend.id,
          failures: change.failures,
          cooldownSeconds: backend.health.cooldownSeconds,
          detail: reason,
        },
        'backend out of rotation: failures in a row',
      );
    } else {
      this.#log.info({ backend: backend.id }, 'backend back in rotation: a run succeeded');
    }
    await this.#announce();
  }

  async #announce(): Promise<void> {
    try {
      await this.#changed();
    } catch (error) {
      this.#log.warn({ err: error }, 'backend health change not announced');
    }
  }
}
