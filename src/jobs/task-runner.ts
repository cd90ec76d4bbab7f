import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { FinishCode } from '../domain/finish-code.ts';
import { type ModelDefinition, maxRunSeconds } from '../domain/model.ts';
import type {
  Engine,
  EngineContext,
  EngineFailure,
  EngineOutput,
  EngineResult,
  StopReason,
  TaskCheckpoint,
} from '../engines/engine.ts';
import type { TaskEvent, TaskEvents } from '../events/task-events.ts';
import type { OutageLog } from '../observability/outage-log.ts';
import { contextFrom, inSpan, recordSpan } from '../observability/tracing.ts';
import type { TaskFinisher } from '../services/task-finisher.ts';
import type { Logger } from '../shared/logger.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import { type AttemptRecord, recordAttempt } from '../store/backend.store.ts';
import type { Db } from '../store/database.ts';
import { isDatabaseUnavailable } from '../store/database-errors.ts';
import type { NewMediaRow } from '../store/media.store.ts';
import {
  type ClaimedTask,
  claimTask,
  recoverExpiredLeases,
  releaseTask,
  writeCheckpoint,
} from '../store/task-queue.store.ts';
import type { BackendHealthService } from './backend-health.ts';
import { type EngineInputs, engineRequest } from './engine-request.ts';
import { failsOver, type Placement, Placements } from './placement.ts';
import { progressWriter } from './progress-writer.ts';
import { RunHold } from './run-hold.ts';
import { storeOutputs } from './store-outputs.ts';

/** The longest wait between two tries of a finish the database could not take. */
const finishRetryMaxMs = 5_000; // 5 seconds

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
  readonly #idle = new Set<() => void>();
  /** Slots waiting before they retry a finish; only stopping cuts that short. */
  readonly #pausing = new Set<() => void>();
  readonly #placements: Placements;
  #slots: Promise<void>[] = [];
  #stopping = false;
  #lastSweep = Number.NEGATIVE_INFINITY;
  #unsubscribe: (() => void) | undefined;

  constructor(options: TaskRunnerOptions) {
    this.#o = options;
    this.#placements = new Placements(options.log);
  }

  start(): void {
    this.#unsubscribe = this.#o.events.subscribe((event) => this.#onEvent(event));
    this.#slots = Array.from({ length: this.#o.concurrency }, () => this.#slot());
  }

  /** Stops claiming, lets running tasks finish for up to `drainMs`, then gives the rest back. */
  async stop(drainMs: number): Promise<void> {
    this.#stopping = true;
    this.#wakeAll();
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
    if (event.type === 'queued') this.#wakeOne();
    else if (event.finished) this.#running.get(event.taskId)?.('cancelled');
  }

  async #slot(): Promise<void> {
    while (!this.#stopping) {
      let claimed: ClaimedTask | undefined;
      try {
        await this.#sweep();
        claimed = await claimTask(
          this.#o.db,
          this.#owner,
          this.#o.leaseMs,
          this.#o.maxRunningPerAccount,
        );
      } catch (error) {
        if (isDatabaseUnavailable(error)) this.#o.outages.report('task queue unavailable', error);
        else this.#o.log.error({ err: error }, 'task queue unavailable; retrying');
      }
      if (claimed === undefined) {
        await this.#sleep();
        continue;
      }
      try {
        await this.#run(claimed);
      } catch (error) {
        // Finishing (or handing back) could not be written: the database went away. The task
        // keeps its lease, which expires, and it runs again; the slot lives on.
        const what = 'task outcome not recorded; it returns to the queue when its lease expires';
        if (isDatabaseUnavailable(error))
          this.#o.outages.report(what, error, { taskId: claimed.task.id });
        else this.#o.log.error({ err: error, taskId: claimed.task.id }, what);
        await this.#sleep();
      }
    }
  }

  /** Slots waiting for work now, asleep until a `queued` event or the next poll. */
  get idleSlots(): number {
    return this.#idle.size;
  }

  #sleep(): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    return this.#wait(this.#idle, this.#o.pollMs);
  }

  #wakeAll(): void {
    for (const wake of [...this.#idle, ...this.#pausing]) wake();
  }

  #wakeOne(): void {
    const [wake] = this.#idle;
    wake?.();
  }

  /** Resolves after `ms`, or sooner when something in `waiting` wakes it. */
  #wait(waiting: Set<() => void>, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiting.add(wake);
    });
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

  async #run({ task, content }: ClaimedTask): Promise<void> {
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
    // The submission's trace, whichever process submitted it: its context came with the task.
    const submitted = contextFrom(task.trace_context);
    const traced = {
      'atelier.task_id': task.id,
      'atelier.content_id': content.id,
      'atelier.model_id': content.model_id,
      'atelier.attempt': task.attempts,
      ...(placement === undefined ? {} : { 'atelier.backend': placement.backend.id }),
    };
    // The first wait only: a retry's would overlap the runs before it.
    if (task.attempts === 1 && task.claimed_at !== null) {
      recordSpan('atelier.queue.wait', {
        parent: submitted,
        start: task.created_at,
        end: task.claimed_at,
        attributes: traced,
      });
    }
    const startedAt = performance.now();
    const ended = (fields: { finishCode: number | null; detail?: string | undefined }) => {
      const ms = Math.round(performance.now() - startedAt);
      const { detail, finishCode } = fields;
      const logged = { ...ids, finishCode, ms, stopped: hold.reason ?? null };
      this.#o.log.info(detail ? { ...logged, detail } : logged, 'engine run ended');
    };
    /** This run's record, for a run that holds a slot on a recorded backend. */
    const run = (
      outcome: AttemptRecord['outcome'],
      detail: string | null = null,
      providerStatus: number | null = null,
    ): AttemptRecord | undefined =>
      placement?.recorded === true && task.claimed_at !== null
        ? {
            taskId: task.id,
            attempt: task.attempts,
            backendId: placement.backend.id,
            startedAt: task.claimed_at,
            outcome,
            detail,
            providerStatus,
          }
        : undefined;
    const attempt = (
      outcome: AttemptRecord['outcome'],
      detail: string | null = null,
      providerStatus: number | null = null,
    ) => {
      const record = run(outcome, detail, providerStatus);
      return record === undefined ? Promise.resolve() : this.#record(record);
    };
    // Not waited for: the engine need not wait on a wake-up call. Events leave in the order
    // published, so this one still precedes the finish's.
    void this.#announce(changed);
    try {
      let result: EngineResult;
      try {
        result = await Promise.race([
          inSpan('atelier.engine.run', { parent: submitted, attributes: traced }, async (span) => {
            const result = await this.#execute(
              { taskId: task.id, accountId: task.account_id, kind: content.kind },
              content.model_id,
              placement,
              content.input,
              {
                signal: hold.signal,
                reportProgress: progress.report,
                checkpoint: this.#checkpoint(task),
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
          await attempt('stopped', hold.reason);
        }
        if (hold.reason === 'shutdown')
          await releaseTask(this.#o.db, task.id, task.lease_token, false);
        else if (hold.reason === undefined) {
          const reason = error instanceof Error ? error.message : String(error);
          await attempt('error', reason);
          if (placement !== undefined) await this.#o.health.failed(placement.backend, reason);
          await this.#failed(task, content.model_id, placement, error);
        }
        return;
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
        await attempt(
          'failed_over',
          result.ok ? null : (result.detail ?? result.message),
          result.ok ? null : (result.providerStatus ?? null),
        );
        await this.#failOver(task, placement!);
        return;
      }
      if (hold.reason === undefined || hold.reason === 'timeout') {
        // Recorded with the finish, in its statement: one write fewer on the queue's path.
        const ended = run(
          result.ok ? 'ok' : hold.reason === 'timeout' ? 'stopped' : 'failed',
          result.ok ? null : (result.detail ?? result.message),
          result.ok ? null : (result.providerStatus ?? null),
        );
        await this.#settle(task, content, result, ended);
      } else {
        await attempt('stopped', hold.reason);
        if (hold.reason === 'shutdown')
          await releaseTask(this.#o.db, task.id, task.lease_token, false);
      }
    } finally {
      hold.release();
      this.#running.delete(task.id);
    }
  }

  async #execute(
    task: Parameters<typeof engineRequest>[0],
    modelId: string,
    placement: Placement | undefined,
    input: unknown,
    context: EngineContext,
  ): Promise<EngineResult> {
    const engine =
      placement === undefined ? undefined : this.#o.engines.get(placement.backend.engine);
    if (placement === undefined || engine === undefined) {
      return {
        ok: false,
        finishCode: FinishCode.EngineFailure,
        message: `Model "${modelId}" is no longer available.`,
      };
    }
    // An input gone since submission finishes the task (code 4) without running the engine.
    const loaded = await engineRequest(
      task,
      input,
      placement.backend.engineOptions,
      this.#o.inputs,
    );
    if (!loaded.ok) return loaded;
    return engine.run(loaded.request, context);
  }

  /** Back to the queue, counted as an attempt; the next claim passes this backend over. */
  async #failOver(task: ClaimedTask['task'], placement: Placement): Promise<void> {
    const released = await releaseTask(
      this.#o.db,
      task.id,
      task.lease_token,
      true,
      placement.backend.id,
    );
    if (!released) return;
    this.#o.log.warn(
      { taskId: task.id, backend: placement.backend.id, attempt: task.attempts },
      'task failed over: its backend did not take it; back in the queue for another',
    );
    await this.#announce({ type: 'queued', taskId: task.id });
  }

  /** Records a run's end; a failure to is logged (the record is the operator's history). */
  async #record(record: AttemptRecord): Promise<void> {
    try {
      await recordAttempt(this.#o.db, record);
    } catch (error) {
      this.#o.log.warn({ err: error, taskId: record.taskId }, 'task attempt not recorded');
    }
  }

  /**
   * The task's checkpoint as claimed, when it names a job on the backend this run holds (a job
   * on another backend is not this one's to resume); writes are fenced by this claim's lease.
   */
  #checkpoint(task: ClaimedTask['task']): TaskCheckpoint {
    const mine =
      task.checkpoint_backend_id === null || task.checkpoint_backend_id === task.backend_id;
    return {
      saved: mine ? task.engine_checkpoint : null,
      save: async (checkpoint) => {
        if (!(await writeCheckpoint(this.#o.db, task.id, task.lease_token, checkpoint))) {
          throw new Error(`task ${task.id} is no longer held by this worker`);
        }
      },
    };
  }

  /**
   * Records a run's outcome: its files stored once, then the finish, fenced by the lease. The
   * outputs are in hand (a provider was paid for them): a finish the database cannot take now
   * (it is away) is tried again, waiting longer each time, rather than leaving the task to run
   * again after its lease; the heartbeat goes on meanwhile. The files go when the finish is
   * fenced (cancelled, or taken over by another worker) or given up (this worker stopping):
   * nothing is left on disk that no media row names.
   */
  async #settle(
    task: ClaimedTask['task'],
    content: ClaimedTask['content'],
    result: EngineResult,
    attempt: AttemptRecord | undefined,
  ): Promise<void> {
    const media = result.ok ? await this.#store(task.account_id, content.id, result.outputs) : [];
    const outcome = result.ok
      ? { code: FinishCode.Ok, message: null, media, ...(attempt ? { attempt } : {}) }
      : {
          code: result.finishCode,
          message: accountMessage(task.id, result),
          ...(attempt ? { attempt } : {}),
        };
    for (let round = 1; ; round++) {
      try {
        const finished = await this.#o.finisher.finish(
          task.id,
          { kind: 'lease', token: task.lease_token },
          outcome,
          content.model_id,
        );
        if (finished === undefined) await this.#discard(media);
        return;
      } catch (error) {
        if (!isDatabaseUnavailable(error) || this.#stopping) {
          await this.#discard(media);
          throw error;
        }
        this.#o.outages.report('task outcome not recorded yet; trying again', error, {
          taskId: task.id,
        });
        await this.#pause(Math.min(finishRetryMaxMs, 250 * 2 ** (round - 1)));
      }
    }
  }

  /** Writes an engine's files; those written before a failure are removed with it. */
  async #store(accountId: string, contentId: string, outputs: readonly EngineOutput[]) {
    const written: NewMediaRow[] = [];
    try {
      return await storeOutputs(this.#o.storage, accountId, contentId, outputs, written);
    } catch (error) {
      await this.#discard(written);
      throw error;
    }
  }

  /** Removes stored files no finish will name; a failure to is logged, not thrown. */
  async #discard(media: readonly NewMediaRow[]): Promise<void> {
    const removed = await Promise.allSettled(
      media.map((m) => this.#o.storage.remove(m.storageKey)),
    );
    for (const failed of removed.filter((r) => r.status === 'rejected')) {
      this.#o.log.warn({ err: failed.reason }, 'a file no task names could not be removed');
    }
  }

  /** Waits, or less when the runner stops. */
  #pause(ms: number): Promise<void> {
    return this.#wait(this.#pausing, ms);
  }

  async #failed(
    task: ClaimedTask['task'],
    modelId: string,
    placement: Placement | undefined,
    error: unknown,
  ): Promise<void> {
    this.#o.log.error(
      { err: error, taskId: task.id, attempt: task.attempts, backend: placement?.backend.id },
      'engine failed unexpectedly',
    );
    const avoid = placement !== undefined && placement.poolSize > 1 ? placement.backend.id : null;
    if (
      task.attempts < task.max_attempts &&
      (await releaseTask(this.#o.db, task.id, task.lease_token, true, avoid))
    ) {
      await this.#announce({ type: 'queued', taskId: task.id });
      return;
    }
    await this.#o.finisher.finish(
      task.id,
      { kind: 'lease', token: task.lease_token },
      {
        code: FinishCode.EngineFailure,
        message: `The engine failed in each of ${task.attempts} attempts. Credits were refunded.`,
      },
      modelId,
    );
  }

  async #announce(event: TaskEvent): Promise<void> {
    try {
      await this.#o.events.publish(event);
    } catch (error) {
      this.#o.log.warn({ err: error }, 'task event not published');
    }
  }
}

/**
 * The finish message of a failed run. When the operator's log holds more (`detail`, with the
 * task's id), the account is given that id as the reference to ask the operator about.
 */
function accountMessage(taskId: string, failure: EngineFailure): string {
  return failure.detail === undefined
    ? failure.message
    : `${failure.message} Reference for the operator: ${taskId}.`;
}
