import { FinishCode } from '../domain/finish-code.ts';
import type { EngineFailure, EngineOutput, EngineResult } from '../engines/engine.ts';
import type { TaskEvent } from '../events/task-events.ts';
import type { OutageLog } from '../observability/outage-log.ts';
import type { TaskFinisher } from '../services/task-finisher.ts';
import type { Logger } from '../shared/logger.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import type { AttemptRecord } from '../store/backend.store.ts';
import type { Db } from '../store/database.ts';
import { isDatabaseUnavailable } from '../store/database-errors.ts';
import { anyMediaRecorded, type NewMediaRow } from '../store/media.store.ts';
import { type ClaimedTask, type ClaimRequest, releaseTask } from '../store/task-queue.store.ts';
import type { Placement } from './placement.ts';
import { storeOutputs } from './store-outputs.ts';

/** The longest wait between two tries of a finish the database could not take. */
const finishRetryMaxMs = 5_000; // 5 seconds

export interface RunOutcomesOptions {
  db: Db;
  storage: MediaStorage;
  finisher: TaskFinisher;
  outages: OutageLog;
  log: Logger;
  /** Publishes a task event; a failure to is logged, not thrown. */
  announce(event: TaskEvent): Promise<void>;
  /** Waits before a finish is tried again; the runner stopping cuts it short. */
  pause(ms: number): Promise<void>;
  /** Whether the runner is stopping: a finish is then not tried again. */
  stopping(): boolean;
}

type Task = ClaimedTask['task'];

/**
 * How a claimed run's end is recorded: its finish (files stored, then the finish fenced by the
 * lease), or the task handed back to the queue for another attempt.
 */
export class RunOutcomes {
  readonly #o: RunOutcomesOptions;

  constructor(options: RunOutcomesOptions) {
    this.#o = options;
  }

  /**
   * Records a run's outcome: its files stored once, then the finish, fenced by the lease. The
   * outputs are in hand (a provider was paid for them): a finish the database cannot take now
   * (it is away) is tried again, waiting longer each time, rather than leaving the task to run
   * again after its lease; the heartbeat goes on meanwhile. The files go when the finish is
   * fenced (cancelled, or taken over by another worker) or given up (this worker stopping):
   * nothing is left on disk that no media row names.
   *
   * A success's finish carries the slot's next claim (`nextClaim`, asked at each try; none
   * once the runner stops) in the same statement. Then what it claimed is returned; undefined
   * when no claim was made. An error there other than the database being away may be the
   * claim's, so the finish is tried again at once, alone: a result is never lost to a claim.
   */
  async settle(
    task: Task,
    content: ClaimedTask['content'],
    result: EngineResult,
    attempt: AttemptRecord | undefined,
    nextClaim?: () => ClaimRequest | undefined,
  ): Promise<{ readonly claimed: ClaimedTask | undefined } | undefined> {
    const media = result.ok ? await this.#store(task.account_id, content.id, result.outputs) : [];
    const outcome = result.ok
      ? { code: FinishCode.Ok, message: null, media, ...(attempt ? { attempt } : {}) }
      : {
          code: result.finishCode,
          message: accountMessage(task.id, result),
          ...(attempt ? { attempt } : {}),
        };
    let withClaim = result.ok ? nextClaim : undefined;
    for (let round = 1; ; round++) {
      const claim = withClaim?.();
      try {
        if (claim === undefined) {
          const finished = await this.#o.finisher.finish(
            task.id,
            { kind: 'lease', token: task.lease_token },
            outcome,
            content.model_id,
          );
          if (finished === undefined) await this.#discardUnrecorded(media);
          return undefined;
        }
        const { finished, claimed } = await this.#o.finisher.finishAndClaim(
          task.id,
          task.lease_token,
          { media, ...(attempt ? { attempt } : {}) },
          content.model_id,
          claim,
        );
        if (finished === undefined) await this.#discardUnrecorded(media);
        return { claimed };
      } catch (error) {
        if (claim !== undefined && !isDatabaseUnavailable(error)) {
          this.#o.log.error(
            { err: error, taskId: task.id },
            'a finish with the next claim failed; finishing alone',
          );
          withClaim = undefined;
          continue;
        }
        if (!isDatabaseUnavailable(error) || this.#o.stopping()) {
          await this.#discardUnrecorded(media);
          throw error;
        }
        this.#o.outages.report('task outcome not recorded yet; trying again', error, {
          taskId: task.id,
        });
        await this.#o.pause(Math.min(finishRetryMaxMs, 250 * 2 ** (round - 1)));
      }
    }
  }

  /**
   * An engine's unexpected error: back to the queue while attempts are left (passing this
   * backend over when its pool has another), else finished as an engine failure with refund.
   */
  async failed(
    task: Task,
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
      await this.#o.announce({ type: 'queued', taskId: task.id });
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

  /** Back to the queue, counted as an attempt; the next claim passes this backend over. */
  async failOver(task: Task, placement: Placement): Promise<void> {
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
    await this.#o.announce({ type: 'queued', taskId: task.id });
  }

  /** Back to the queue as it was, not counted as an attempt: this worker is stopping. */
  async giveBack(task: Task): Promise<void> {
    await releaseTask(this.#o.db, task.id, task.lease_token, false);
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

  /**
   * Removes the files of a finish that was refused or given up, unless a try of it committed
   * after all: when the connection broke after the commit and before its answer, the try after
   * it is refused by the finish it cannot know it made (or the worker stops there), and those
   * files are the result. When that cannot be read, the files stay (an orphan file costs disk;
   * a removed one, a result).
   */
  async #discardUnrecorded(media: readonly NewMediaRow[]): Promise<void> {
    if (media.length === 0) return;
    const recorded = await anyMediaRecorded(
      this.#o.db,
      media.map((m) => m.id),
    ).catch(() => true);
    if (!recorded) await this.#discard(media);
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
