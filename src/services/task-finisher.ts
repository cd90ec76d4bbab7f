import { FinishCode } from '../domain/finish-code.ts';
import type { TaskEvents } from '../events/task-events.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Logger } from '../shared/logger.ts';
import { findContent } from '../store/content.store.ts';
import { refundsOfContent } from '../store/credit.store.ts';
import type { Db } from '../store/database.ts';
import {
  type ClaimedTask,
  type ClaimRequest,
  type FinishGuard,
  type FinishOutcome,
  finishOkThenClaim,
  finishTask,
  type OkOutcome,
  type TaskRow,
} from '../store/task-queue.store.ts';

export interface TaskFinisherDeps {
  db: Db;
  events: TaskEvents;
  /** Task durations and refunds, recorded after each finish commits (default: none). */
  metrics?: Metrics;
  /** Where failed metrics and events are reported (default: nowhere; they never fail a finish). */
  log?: Logger;
}

/**
 * The one way a task finishes, whoever finishes it (the runner, a cancellation, a timeout,
 * the lease sweep): the store's guarded transaction (status, finish code, media, refund once),
 * then, only when that committed, metrics and the task event. A refused guard (another finish
 * won) records and announces nothing.
 */
export class TaskFinisher {
  readonly #deps: TaskFinisherDeps;

  constructor(deps: TaskFinisherDeps) {
    this.#deps = deps;
  }

  /** The finished row, or undefined when the guard refused (already finished, lease lost). */
  async finish(
    taskId: string,
    guard: FinishGuard,
    outcome: FinishOutcome,
    modelId?: string,
  ): Promise<TaskRow | undefined> {
    const task = await finishTask(this.#deps.db, taskId, guard, outcome);
    if (task !== undefined) await this.#finished(task, modelId);
    return task;
  }

  /**
   * A successful run's finish under its lease and the worker's next claim, in one statement
   * (`finishOkThenClaim`); the finish is recorded and announced as by {@link finish}.
   */
  async finishAndClaim(
    taskId: string,
    token: string,
    outcome: OkOutcome,
    modelId: string,
    claim: ClaimRequest,
  ): Promise<{ finished: TaskRow | undefined; claimed: ClaimedTask | undefined }> {
    const done = await finishOkThenClaim(this.#deps.db, taskId, token, outcome, claim);
    if (done.finished !== undefined) await this.#finished(done.finished, modelId);
    return done;
  }

  async #finished(task: TaskRow, modelId: string | undefined): Promise<void> {
    await this.#observe(task, modelId);
    // Not waited for: on PostgreSQL a NOTIFY is a round trip and a commit that waits for its
    // flush to disk, which a worker would otherwise wait out before its next claim. Events
    // leave in the order published, so this one still follows the task's earlier ones.
    void this.#announce(task);
  }

  async #announce(task: TaskRow): Promise<void> {
    try {
      await this.#deps.events.publish({
        type: 'changed',
        taskId: task.id,
        accountId: task.account_id,
        finished: true,
      });
    } catch (error) {
      // Events are a wake-up call; subscribers also read the row, so a lost one only delays.
      this.#deps.log?.warn({ err: error, taskId: task.id }, 'task event not published');
    }
  }

  /**
   * Its duration from first claim and, for a non-zero code, the refund its transaction made
   * (read back from the ledger: the store counts nothing). Cancelled tasks stay out of the
   * duration histogram: that measures workers, and a cancellation is the client's decision.
   * Metrics never fail a finish, so a failed read is only logged.
   */
  async #observe(task: TaskRow, modelId: string | undefined): Promise<void> {
    const { metrics, db } = this.#deps;
    if (metrics === undefined) return;
    try {
      const code = task.finish_code ?? FinishCode.Ok;
      if (code !== FinishCode.Cancelled && task.started_at !== null && task.finished_at !== null) {
        const model =
          modelId ?? (await findContent(db, task.account_id, task.content_id))?.model_id;
        const seconds = (task.finished_at.getTime() - task.started_at.getTime()) / 1000;
        metrics.observeTaskFinished(model ?? 'unknown', code, Math.max(0, seconds));
      }
      if (code !== FinishCode.Ok) {
        metrics.countCredits(
          'refund',
          await refundsOfContent(db, task.account_id, task.content_id),
        );
      }
    } catch (error) {
      this.#deps.log?.warn({ err: error, taskId: task.id }, 'task metrics not recorded');
    }
  }
}
