import type { Actor } from '../domain/actor.ts';
import { type PoolSlotState, placeOf, type TaskPlace } from '../domain/queue-place.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import {
  type Cursors,
  type Page,
  pageSize,
  timeIdPageInfo,
  timeIdPosition,
} from '../shared/pagination.ts';
import type { UrlSigner } from '../storage/url-signer.ts';
import {
  type ContentListFilter,
  type ContentRow,
  findContent,
  listContents,
} from '../store/content.store.ts';
import type { Db } from '../store/database.ts';
import { listMediaOfContents } from '../store/media.store.ts';
import { attemptCounts, placedTasks, poolSlots } from '../store/queue-place.store.ts';
import { findTask, findTasksOfContents, runningOf } from '../store/task-queue.store.ts';
import { type ContentView, type TaskView, toMediaView, toTaskView } from './generation-views.ts';
import type { TaskUpdates } from './task-updates.ts';

/**
 * Reading generations of an account: one content or task, the history (the place to reconcile
 * an uncertain submission), and live task changes for subscriptions. Every read is scoped to
 * the actor's account in the query itself.
 */
export interface ResultServiceDeps {
  db: Db;
  /** Live updates from the task event log. */
  updates: TaskUpdates;
  signer: UrlSigner;
  /** The per-account limit on running tasks, to say why a queued task waits (0: none). */
  maxRunningPerAccount?: number;
  cursors: Cursors;
  clock: Clock;
}

/** Why a queued task is not running yet, when there is a reason beyond the queue itself. */
export type WaitingReason = 'account_concurrency_limit';

export class ResultService {
  readonly #deps: ResultServiceDeps;

  constructor(deps: ResultServiceDeps) {
    this.#deps = deps;
  }

  async getContent(actor: Actor, contentId: string): Promise<ContentView> {
    const content = await findContent(this.#deps.db, actor.accountId, contentId);
    if (content === undefined) throw notFound('content', contentId, 'contentId');
    const [view] = await this.#views([content]);
    return view!;
  }

  async getTask(actor: Actor, taskId: string): Promise<TaskView> {
    const task = await findTask(this.#deps.db, actor.accountId, taskId);
    if (task === undefined) throw notFound('task', taskId, 'taskId');
    return toTaskView(task);
  }

  /**
   * Where each of the account's unfinished tasks among `taskIds` stands: its place in its
   * pool's queue and when it should start and finish (domain/queue-place.ts). Two queries for
   * any number of tasks; a finished task, or another account's, is absent.
   */
  places(actor: Actor, taskIds: readonly string[]): Promise<Map<string, TaskPlace>> {
    return this.placeReader(actor)(taskIds);
  }

  /**
   * A reader of places for one response. Every call reads the tasks afresh, but estimates them
   * all at one `now` and from one read of each pool, so the tasks of one answer are placed
   * against the same state: a task behind another never shows an earlier start.
   */
  placeReader(actor: Actor): (taskIds: readonly string[]) => Promise<Map<string, TaskPlace>> {
    const now = this.#deps.clock.now();
    const pools = new Map<string, Promise<PoolSlotState[]>>();
    const readPools = (modelIds: string[]): void => {
      const missing = modelIds.filter((id) => !pools.has(id));
      if (missing.length === 0) return;
      const read = poolSlots(this.#deps.db, missing);
      for (const id of missing)
        pools.set(
          id,
          read.then((found) => found.get(id) ?? []),
        );
    };
    return async (taskIds) => {
      const tasks = await placedTasks(this.#deps.db, actor.accountId, taskIds);
      readPools([...new Set([...tasks.values()].map((t) => t.modelId))]);
      const placed = await Promise.all(
        [...tasks].map(async ([id, task]) => {
          const pool = await pools.get(task.modelId)!;
          return [id, placeOf(task, pool, now)] as const;
        }),
      );
      return new Map(placed);
    };
  }

  /** How many times each of the account's tasks among `taskIds` was started on a backend. */
  attempts(actor: Actor, taskIds: readonly string[]): Promise<Map<string, number>> {
    return attemptCounts(this.#deps.db, actor.accountId, taskIds);
  }

  /** Where one task stands; null once it has finished. */
  async place(actor: Actor, taskId: string): Promise<TaskPlace | null> {
    return (await this.places(actor, [taskId])).get(taskId) ?? null;
  }

  /**
   * Why a task of the actor's account waits: its account already runs as many tasks as it may.
   * Null when the task is not queued or only waits its turn.
   */
  async waitingReason(actor: Actor, task: TaskView): Promise<WaitingReason | null> {
    const limit = this.#deps.maxRunningPerAccount ?? 0;
    if (task.status !== 'queued' || limit === 0) return null;
    const running = await runningOf(this.#deps.db, actor.accountId);
    return running >= limit ? 'account_concurrency_limit' : null;
  }

  /** The account's history, newest first: where an uncertain submission is reconciled. */
  async listContents(
    actor: Actor,
    filter: ContentListFilter,
    first?: number | null,
    after?: string | null,
  ): Promise<Page<ContentView>> {
    const size = pageSize(first, 20);
    const cursors = this.#deps.cursors.for(actor.accountId, 'contents');
    const rows = await listContents(
      this.#deps.db,
      actor.accountId,
      filter,
      timeIdPosition(cursors, after),
      size + 1,
    );
    return {
      nodes: await this.#views(rows.slice(0, size)),
      pageInfo: timeIdPageInfo(rows, size, cursors, (r) => ({ createdAt: r.created_at, id: r.id })),
    };
  }

  /**
   * Every change of one task of the account until it is finished (`taskUpdated`): its current
   * state first, or with `after` what came since that cursor. Another account's task is
   * 140004, like an unknown one.
   */
  watchTask(
    actor: Actor,
    taskId: string,
    signal: AbortSignal,
    after: string | null = null,
  ): Promise<AsyncGenerator<TaskView>> {
    return this.#deps.updates.task(actor, taskId, after, signal);
  }

  /** The cursor of the task's newest logged event (null when the log no longer has one). */
  taskCursor(actor: Actor, taskId: string): Promise<string | null> {
    return this.#deps.updates.latestCursor(actor, taskId);
  }

  /** Every task change of the account (`myTaskUpdates`), from now or after a cursor. */
  watchAccountTasks(
    actor: Actor,
    signal: AbortSignal,
    after: string | null = null,
  ): Promise<AsyncGenerator<TaskView>> {
    return this.#deps.updates.account(actor, after, signal);
  }

  async #views(contents: readonly ContentRow[]): Promise<ContentView[]> {
    const ids = contents.map((c) => c.id);
    const [tasks, media] = await Promise.all([
      findTasksOfContents(this.#deps.db, ids),
      listMediaOfContents(this.#deps.db, ids),
    ]);
    const sign = (mediaId: string) => this.#deps.signer.sign(mediaId);
    return contents.map((content) => ({
      contentId: content.id,
      kind: content.kind,
      modelId: content.model_id,
      input: content.input,
      task: toTaskView(tasks.find((t) => t.content_id === content.id)!),
      media: media.filter((m) => m.content_id === content.id).map((m) => toMediaView(m, sign)),
      creditsCharged: content.credits_charged,
      creditsRefunded: content.credits_refunded,
      idempotencyKey: content.idempotency_key,
      createdAt: content.created_at,
    }));
  }
}

function notFound(what: string, id: string, field: string): AppError {
  return new AppError(ErrorCode.NotFound, `No ${what} "${id}" in this account.`, { field });
}
