import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { FinishCode } from '../domain/finish-code.ts';
import { type ModelDefinition, maxRunSeconds } from '../domain/model.ts';
import type { Engine, EngineResult, StopReason } from '../engines/engine.ts';
import type { TaskEvent, TaskEvents } from '../events/task-events.ts';
import type { OutageLog } from '../observability/outage-log.ts';
import { inSpan } from '../observability/tracing.ts';
import type { TaskFinisher } from '../services/task-finisher.ts';
import type { Logger } from '../shared/logger.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import type { Db } from '../store/database.ts';
import { isDatabaseUnavailable } from '../store/database-errors.ts';
import {
  type ClaimedTask,
  type ClaimRequest,
  claimTask,
  recoverExpiredLeases,
} from '../store/task-queue.store.ts';
import { attemptRecords, failureOf } from './attempt-records.ts';
import type { BackendHealthService } from './backend-health.ts';
import { leaseCheckpoint } from './checkpoint.ts';
import { type EngineInputs, runEngine } from './engine-request.ts';
import { failsOver, Placements } from './placement.ts';
import { progressWriter } from './progress-writer.ts';
import { RunHold } from './run-hold.ts';
import { RunOutcomes } from './run-outcomes.ts';
import { runTrace } from './run-trace.ts';
import { WakeList } from './wake-list.ts';

export interface TaskRunnerOptions {
  db: Db;
  events: TaskEvents;
  storage: MediaStorage;
  engines: ReadonlyMap<string, Engine>;
  model(modelId: string): ModelDefinition | undefined;
  inputs: EngineInputs;
  log: Logger;
  /** Tasks run at once by this process. */
  concurrency: number;
  /** A claim is held this long without a heartbeat; heartbeats come every third of it. */
  leaseMs: number;
  /** Fallback poll when no wake-up arrives. */
  pollMs: number;
  /** Tasks one account may have running at once across all workers; 0 for no limit. */
  maxRunningPerAccount?: number;
  /** The one way a task finishes: refund, metrics and the event after commit. */
  finisher: TaskFinisher;
  /** Where the database being away is logged once and counted, not per poll. */
  outages: OutageLog;
  /** How each run went for its backend, toward the backend's cooldown. */
  health: BackendHealthService;
}

/**
 * Runs queued tasks: claims under a lease (with a slot on one of its model's backends),
 * renews it while the engine works, writes progress, and finishes (media, or failure with
 * refund) in one transaction fenced by the lease token. An engine's unexpected error, or a
 * failure that was the backend's rather than the work's (no answer, an overloaded server), puts
 * the task back for another attempt, on another backend of its pool when there is one; a
 * worker that dies leaves a lease that expires, and any runner's sweep requeues the task or,
 * with no attempts left, finishes it as lost (code 5) with a refund.
 */
export class TaskRunner {
  readonly #o: TaskRunnerOptions;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  readonly #running = new Map<string, (reason: StopReason) => void>();
  /** Slots waiting for work: a `queued` event wakes one. */
  readonly #idle = new WakeList();
  /** Slots waiting before they retry a finish; only stopping cuts that short. */
  readonly #pausing = new WakeList();
  readonly #outcomes: RunOutcomes;
  readonly #placements: Placements;
  #slots: Promise<void>[] = [];
  #stopping = false;
  #lastSweep = Number.NEGATIVE_INFINITY;
  #unsubscribe: (() => void) | undefined;

  constructor(options: TaskRunnerOptions) {
    this.#o = options;
    this.#placements = new Placements(options.log);
    this.#outcomes = new RunOutcomes({
      ...options,
      announce: (event) => this.#announce(event),
      pause: (ms) => this.#pausing.wait(ms),
      stopping: () => this.#stopping,
    });
  }

  start(): void {
    this.#unsubscribe = this.#o.events.subscribe((event) => this.#onEvent(event));
    this.#slots = Array.from({ length: this.#o.concurrency }, () => this.#slot());
  }

  /** Stops claiming, lets running tasks finish for up to `drainMs`, then gives the rest back. */
  async stop(drainMs: number): Promise<void> {
    this.#stopping = true;
    this.#idle.wakeAll();
    this.#pausing.wakeAll();
    const drained = Promise.all(this.#slots);
    const timer = setTimeout(() => {
      for (const abort of this.#running.values()) abort('shutdown');
    }, drainMs);
    try {
      await drained;
    } finally {
      clearTimeout(timer);
      this.#unsubscribe?.();
    }
  }

  #onEvent(event: TaskEvent): void {
    // One new task needs one slot: waking them all would only make them race for one row.
    if (event.type === 'queued') this.#idle.wakeOne();
    else if (event.finished) this.#running.get(event.taskId)?.('cancelled');
  }

  /**
   * One worker slot: claim, run, record, again. A successful run's finish carries the slot's
   * next claim, in one statement and one commit (`RunOutcomes.settle`): under load a slot's
   * cycle is one round trip, and that claim sees the task finished (its account's place and its
   * backend's slot free). Any other outcome is written first, then the slot claims.
   */
  async #slot(): Promise<void> {
    // What the last finish claimed with it, when it made a claim (its task, or none queued).
    let next: { readonly claimed: ClaimedTask | undefined } | undefined;
    while (!this.#stopping) {
      const claimed = next === undefined ? await this.#claim() : next.claimed;
      next = undefined;
      if (claimed === undefined) {
        await this.#sleep();
        continue;
      }
      next = await this.#run(claimed).catch(async (error: unknown) => {
        // Finishing (or handing back) could not be written: the database went away. The task
        // keeps its lease, which expires, and it runs again; the slot lives on, after a pause
        // (a pause, not the idle list: a wake-up meant for an idle slot must not land here).
        const what = 'task outcome not recorded; it returns to the queue when its lease expires';
        if (isDatabaseUnavailable(error))
          this.#o.outages.report(what, error, { taskId: claimed.task.id });
        else this.#o.log.error({ err: error, taskId: claimed.task.id }, what);
        if (!this.#stopping) await this.#pausing.wait(this.#o.pollMs);
        return undefined;
      });
    }
    // Claimed with a finish as the runner began to stop: back to the queue, not run here (if
    // that cannot be written, its lease expires and any runner's sweep requeues it).
    const unrun = next?.claimed?.task;
    if (unrun !== undefined) {
      await this.#outcomes.giveBack(unrun).catch((error: unknown) => {
        this.#o.log.warn({ err: error, taskId: unrun.id }, 'task not handed back at stop');
      });
    }
  }

  /** The next task under a lease, after the sweep; none when there is none or on a fault. */
  async #claim(): Promise<ClaimedTask | undefined> {
    try {
      await this.#sweep();
      return await claimTask(
        this.#o.db,
        this.#owner,
        this.#o.leaseMs,
        this.#o.maxRunningPerAccount,
      );
    } catch (error) {
      this.#unavailable(error);
      return undefined;
    }
  }

  /** The queue could not be read: the database is away (reported once an outage), or worse. */
  #unavailable(error: unknown): void {
    if (isDatabaseUnavailable(error)) this.#o.outages.report('task queue unavailable', error);
    else this.#o.log.error({ err: error }, 'task queue unavailable; retrying');
  }

  /** What a finish claims for its slot: none once the runner stops. */
  #nextClaim(): ClaimRequest | undefined {
    if (this.#stopping) return undefined;
    return {
      owner: this.#owner,
      leaseMs: this.#o.leaseMs,
      maxRunningPerAccount: this.#o.maxRunningPerAccount ?? 0,
    };
  }

  /** Slots waiting for work now, asleep until a `queued` event or the next poll. */
  get idleSlots(): number {
    return this.#idle.size;
  }

  #sleep(): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    return this.#idle.wait(this.#o.pollMs);
  }

  /** Requeues tasks of dead workers; finishes as lost those out of attempts. */
  async #sweep(): Promise<void> {
    const now = performance.now(); // elapsed time for pacing, not a date: monotonic
    if (now - this.#lastSweep < this.#o.leaseMs / 2) return;
    this.#lastSweep = now;
    const { requeued, exhausted } = await recoverExpiredLeases(this.#o.db);
    if (requeued > 0) this.#o.log.warn({ requeued }, 'requeued tasks whose lease expired');
    for (const id of exhausted) {
      await this.#o.finisher.finish(
        id,
        { kind: 'expired-lease' },
        {
          code: FinishCode.Lost,
          message: 'Lost: no worker finished it within its attempts. Credits were refunded.',
        },
      );
    }
  }

  /**
   * Runs a claimed task's engine and records the outcome; returns what its finish claimed for
   * the slot, when it made a claim (see #slot).
   */
  async #run({
    task,
    content,
  }: ClaimedTask): Promise<{ claimed: ClaimedTask | undefined } | undefined> {
    const model = this.#o.model(content.model_id);
    const placement =
      model === undefined ? undefined : this.#placements.place(model, task.backend_id);
    const hold = new RunHold({
      db: this.#o.db,
      log: this.#o.log,
      task,
      leaseMs: this.#o.leaseMs,
      limitSeconds: maxRunSeconds(content.kind, model),
    });
    this.#running.set(task.id, (reason) => hold.stop(reason));
    const changed: TaskEvent = {
      type: 'changed',
      taskId: task.id,
      accountId: task.account_id,
      finished: false,
    };
    const progress = progressWriter(this.#o.db, task, () => this.#announce(changed));
    const ids = {
      taskId: task.id,
      contentId: content.id,
      modelId: content.model_id,
      backend: placement?.backend.id ?? null,
    };
    this.#o.log.info({ ...ids, attempt: task.attempts }, 'task started');
    const trace = runTrace({ task, content }, placement);
    const startedAt = performance.now();
    const ended = (fields: { finishCode: number | null; detail?: string | undefined }) => {
      const ms = Math.round(performance.now() - startedAt);
      const { detail, finishCode } = fields;
      const logged = { ...ids, finishCode, ms, stopped: hold.reason ?? null };
      this.#o.log.info(detail ? { ...logged, detail } : logged, 'engine run ended');
    };
    const attempts = attemptRecords(this.#o.db, this.#o.log, task, placement);
    // Not waited for: the engine need not wait on a wake-up call. Events leave in the order
    // published, so this one still precedes the finish's.
    void this.#announce(changed);
    try {
      let result: EngineResult;
      try {
        result = await Promise.race([
          inSpan('atelier.engine.run', trace, async (span) => {
            const result = await runEngine(
              this.#o.engines,
              this.#o.inputs,
              {
                task: { taskId: task.id, accountId: task.account_id, kind: content.kind },
                modelId: content.model_id,
                placement,
                input: content.input,
              },
              {
                signal: hold.signal,
                reportProgress: progress.report,
                checkpoint: leaseCheckpoint(this.#o.db, task),
              },
            );
            span.setAttributes({
              'atelier.finish_code': result.ok ? FinishCode.Ok : result.finishCode,
            });
            if (!result.ok) span.fail(String(result.finishCode));
            return result;
          }),
          hold.timedOut,
        ]);
      } catch (error) {
        await progress.settled();
        if (hold.reason !== undefined) {
          ended({ finishCode: null });
          await attempts.write('stopped', hold.reason);
        }
        if (hold.reason === 'shutdown') await this.#outcomes.giveBack(task);
        else if (hold.reason === undefined) {
          const reason = error instanceof Error ? error.message : String(error);
          await attempts.write('error', reason);
          if (placement !== undefined) await this.#o.health.failed(placement.backend, reason);
          await this.#outcomes.failed(task, content.model_id, placement, error);
        }
        return undefined;
      }
      // The engine's work is done: from here, a fault is the recording's, never the engine's.
      await progress.settled();
      ended(
        result.ok
          ? { finishCode: FinishCode.Ok }
          : { finishCode: result.finishCode, detail: result.detail },
      );
      const backendFault = !result.ok && result.backendFault === true && hold.reason === undefined;
      if (placement !== undefined && hold.reason === undefined) {
        const reason = result.ok ? '' : (result.detail ?? result.message);
        if (backendFault) await this.#o.health.failed(placement.backend, reason);
        else await this.#o.health.answered(placement.backend);
      }
      if (backendFault && failsOver(task, placement)) {
        await attempts.write('failed_over', ...failureOf(result));
        await this.#outcomes.failOver(task, placement!);
        return undefined;
      }
      if (hold.reason === undefined || hold.reason === 'timeout') {
        // Recorded with the finish, in its statement: one write fewer on the queue's path.
        const ended = attempts.of(
          result.ok ? 'ok' : hold.reason === 'timeout' ? 'stopped' : 'failed',
          ...failureOf(result),
        );
        // A success's finish claims the slot's next task with it (see #slot); the sweep of
        // expired leases, which every claim comes after, comes first.
        if (result.ok) await this.#sweep().catch((error: unknown) => this.#unavailable(error));
        return await this.#outcomes.settle(task, content, result, ended, () => this.#nextClaim());
      } else {
        await attempts.write('stopped', hold.reason);
        if (hold.reason === 'shutdown') await this.#outcomes.giveBack(task);
        return undefined;
      }
    } finally {
      hold.release();
      this.#running.delete(task.id);
    }
  }

  async #announce(event: TaskEvent): Promise<void> {
    try {
      await this.#o.events.publish(event);
    } catch (error) {
      this.#o.log.warn({ err: error }, 'task event not published');
    }
  }
}
