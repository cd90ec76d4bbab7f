import { FinishCode } from '../domain/finish-code.ts';
import { type EngineResult, RunStopped, type StopReason } from '../engines/engine.ts';
import type { Logger } from '../shared/logger.ts';
import type { Db } from '../store/database.ts';
import { renewLease } from '../store/task-queue.store.ts';

/**
 * One run's hold on its task: the lease renewed every third of it, the run-time deadline, and
 * the signal that stops the engine with a {@link RunStopped} reason (cancelled, timeout, lost,
 * shutdown). At the deadline `timedOut` settles whatever the engine does, so an engine that
 * ignores its signal keeps no slot and the task still finishes (code 3) under this lease.
 */
export class RunHold {
  readonly #controller = new AbortController();
  readonly #deadline: NodeJS.Timeout;
  readonly #heartbeat: NodeJS.Timeout;
  readonly #limitSeconds: number;
  readonly #timeUp: (result: EngineResult) => void;
  /** Settles with the finish of a run stopped at its deadline. */
  readonly timedOut: Promise<EngineResult>;
  #reason: StopReason | undefined;
  // Until when this worker knows it holds the task: the claim, then each renewal that
  // answered, counted from when it was sent (the database's expiry is later still).
  #heldUntil: number;

  constructor(o: {
    db: Db;
    log: Logger;
    task: { readonly id: string; readonly lease_token: string };
    leaseMs: number;
    limitSeconds: number;
  }) {
    this.#limitSeconds = o.limitSeconds;
    const { promise, resolve } = Promise.withResolvers<EngineResult>();
    this.timedOut = promise;
    this.#timeUp = resolve;
    this.#heldUntil = performance.now() + o.leaseMs; // monotonic, as the timers
    this.#deadline = setTimeout(() => this.stop('timeout'), o.limitSeconds * 1000);
    this.#heartbeat = setInterval(
      () => {
        const sent = performance.now();
        // A renewal that failed or hangs (the database cut off) leaves the lease to expire.
        if (sent >= this.#heldUntil) {
          o.log.warn({ taskId: o.task.id }, 'lease expired without a renewal; run lost');
          this.stop('lost');
          return;
        }
        renewLease(o.db, o.task.id, o.task.lease_token, o.leaseMs).then(
          (held) => {
            if (held) this.#heldUntil = Math.max(this.#heldUntil, sent + o.leaseMs);
            else this.stop('lost');
          },
          (error: unknown) => o.log.warn({ err: error, taskId: o.task.id }, 'lease renewal failed'),
        );
      },
      Math.max(50, Math.floor(o.leaseMs / 3)),
    );
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the run was stopped; undefined while it runs on. */
  get reason(): StopReason | undefined {
    return this.#reason;
  }

  /** Stops the run once; the first reason stays. */
  stop(asked: StopReason): void {
    if (this.#reason !== undefined) return;
    // Past an expiry no renewal moved, another worker may have claimed the task and resumed
    // its remote job: this run is lost, and must not cancel that job at its deadline.
    const why = asked === 'timeout' && performance.now() >= this.#heldUntil ? 'lost' : asked;
    this.#reason = why;
    this.#controller.abort(new RunStopped(why));
    if (why === 'timeout') this.#timeUp(timeoutResult(this.#limitSeconds));
  }

  /** Stops renewing and the deadline; the run is over. */
  release(): void {
    clearTimeout(this.#deadline);
    clearInterval(this.#heartbeat);
  }
}

/** The finish of a run stopped at its deadline. */
function timeoutResult(limitSeconds: number): EngineResult {
  return {
    ok: false,
    finishCode: FinishCode.TimedOut,
    message: `Timed out: the run took longer than its limit of ${limitSeconds} seconds. Credits were refunded.`,
  };
}
