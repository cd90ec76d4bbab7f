import type { Actor } from '../domain/actor.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import type { CursorCodec, Cursors } from '../shared/pagination.ts';
import type { Db } from '../store/database.ts';
import {
  finishedBy,
  isAfter,
  type LoggedTaskEvent,
  type LogPosition,
  latestTaskEvent,
  logTime,
  replayLog,
} from '../store/task-event.store.ts';
import { findTask } from '../store/task-queue.store.ts';
import { type TaskView, toTaskView } from './generation-views.ts';
import type { TaskEventFeed } from './task-event-feed.ts';

/** How long the log keeps events, and so how old a cursor may be (issue 21: at least a day). */
export const taskEventRetentionMs = 24 * 3_600_000; // 24 hours

/** A position after every event: both numbers are at most 64-bit. */
const endOfLog: LogPosition = { tx: 2n ** 63n - 1n, seq: 2n ** 63n - 1n };

/** Events a subscription may have waiting before it is ended as too far behind. */
const maxBuffered = 10_000;
const replayPage = 500;
/** Tasks whose newest delivered event a subscription remembers, to never go back in time. */
const maxRemembered = 10_000;

export interface TaskUpdatesDeps {
  db: Db;
  feed: TaskEventFeed;
  cursors: Cursors;
}

/**
 * A sealed cursor: the event's log position, and when it happened (to refuse expired ones).
 * The time is the database's, as the log's `at` and its pruning are: one clock writes and
 * judges it, whatever the application's clock says.
 */
interface CursorValue {
  x: string;
  s: string;
  t: number;
}

/**
 * Live task updates that survive a reconnect (issue 21). Every update carries a cursor; a
 * subscription given one first replays, from the event log, what the account missed after it,
 * then continues live from the feed, with nothing lost and nothing twice at the seam: the live
 * listener joins at a position and the replay stops exactly there.
 */
export class TaskUpdates {
  readonly #d: TaskUpdatesDeps;

  constructor(deps: TaskUpdatesDeps) {
    this.#d = deps;
  }

  /**
   * Every task change of the account, from now or after `after` (`myTaskUpdates`). Resolves
   * once listening, so "now" is when the promise settles; `signal` ends it.
   */
  async account(actor: Actor, after: string | null, signal: AbortSignal) {
    const since = after === null ? null : await this.#decode(actor, after);
    return this.#follow(actor, undefined, since, signal, async () => null);
  }

  /**
   * One task's changes until it finishes (`taskUpdated`, `wait_for_generation`): without a
   * cursor, first its current state; with one, what came after it (nothing, when the finish
   * is already behind the cursor).
   */
  async task(
    actor: Actor,
    taskId: string,
    after: string | null,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<TaskView>> {
    // Another account's task is not found, like an unknown one.
    const row = await findTask(this.#d.db, actor.accountId, taskId);
    if (row === undefined) {
      throw new AppError(ErrorCode.NotFound, `No task "${taskId}" in this account.`, {
        field: 'taskId',
      });
    }
    const since = after === null ? null : await this.#decode(actor, after);
    if (since !== null && (await finishedBy(this.#d.db, actor.accountId, taskId, since))) {
      return (async function* () {})();
    }
    return this.#follow(actor, taskId, since, signal, async (from) => {
      const latest = await latestTaskEvent(this.#d.db, actor.accountId, taskId, from);
      if (latest !== undefined) return latest;
      // Older than the log (pruned, or from before it): the row, placed at the join position.
      const at = await logTime(this.#d.db);
      return { position: from, at, accountId: row.account_id, task: row };
    });
  }

  /** Listens at once; the generator then replays (or starts from `initial`) and goes live. */
  async #follow(
    actor: Actor,
    taskId: string | undefined,
    since: LogPosition | null,
    signal: AbortSignal,
    initial: (from: LogPosition) => Promise<LoggedTaskEvent | null>,
  ): Promise<AsyncGenerator<TaskView>> {
    const codec = this.#codec(actor);
    const db = this.#d.db;
    const waiting: LoggedTaskEvent[] = [];
    let overflowed = false;
    let wake: (() => void) | undefined;
    const { from, stop } = await this.#d.feed.listen((event) => {
      if (event.accountId !== actor.accountId) return;
      if (taskId !== undefined && event.task.id !== taskId) return;
      if (waiting.length >= maxBuffered) overflowed = true;
      else waiting.push(event);
      wake?.();
    });
    // Stops listening even if the generator is never run (its `finally` would not be).
    const onAbort = () => {
      stop();
      wake?.();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const newest = new Map<string, bigint>();
    let last = since !== null && isAfter(since, from) ? since : from;
    /** The event as a client sees it, unless one newer of its task went out already. */
    const fresh = (event: LoggedTaskEvent): TaskView | null => {
      const seen = newest.get(event.task.id);
      if (seen !== undefined && event.position.seq <= seen) return null;
      newest.delete(event.task.id);
      newest.set(event.task.id, event.position.seq);
      if (newest.size > maxRemembered) newest.delete(newest.keys().next().value!);
      return this.#viewOf(event, codec);
    };
    return (async function* () {
      try {
        if (since === null) {
          const first = await initial(from);
          if (first !== null) {
            const view = fresh(first)!;
            yield view;
            if (taskId !== undefined && view.status === 'finished') return;
          }
        } else {
          for (let at = since; isAfter(from, at); ) {
            const page = await replayLog(
              db,
              { accountId: actor.accountId, taskId },
              at,
              from,
              replayPage,
            );
            for (const event of page) {
              const view = fresh(event);
              if (view === null) continue;
              yield view;
              if (taskId !== undefined && view.status === 'finished') return;
            }
            if (page.length < replayPage) break;
            at = page.at(-1)!.position;
          }
        }
        while (!signal.aborted) {
          if (overflowed) {
            throw new AppError(
              ErrorCode.InvalidInput,
              'This subscription fell too far behind; subscribe again with the last cursor you received as after.',
              { field: 'after', reason: 'too_far_behind' },
            );
          }
          const event = waiting.shift();
          if (event === undefined) {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            wake = undefined;
            continue;
          }
          if (!isAfter(event.position, last)) continue;
          last = event.position;
          const view = fresh(event);
          if (view === null) continue;
          yield view;
          if (taskId !== undefined && view.status === 'finished') return;
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        stop();
      }
    })();
  }

  /**
   * An event as clients see it, with its sealed cursor, made once however many subscriptions
   * deliver it: an event belongs to one account, whose codec seals it, and 10,000 subscribers
   * should not mean 10,000 AES encryptions and copies of one update. Every subscriber receives
   * the same object, so it is frozen: no reader may change what the others receive.
   */
  readonly #views = new WeakMap<LoggedTaskEvent, TaskView>();

  #viewOf(event: LoggedTaskEvent, codec: CursorCodec): TaskView {
    let view = this.#views.get(event);
    if (view === undefined) {
      view = Object.freeze({ ...toTaskView(event.task), cursor: codec.encode(cursorOf(event)) });
      this.#views.set(event, view);
    }
    return view;
  }

  #codec(actor: Actor): CursorCodec {
    return this.#d.cursors.for(actor.accountId, 'task-events');
  }

  /** The cursor of the task's newest logged event, or null when the log holds none. */
  async latestCursor(actor: Actor, taskId: string): Promise<string | null> {
    const latest = await latestTaskEvent(this.#d.db, actor.accountId, taskId, endOfLog);
    return latest === undefined ? null : this.#codec(actor).encode(cursorOf(latest));
  }

  /** The position a cursor holds; 120001 on `after` when it is not one, or has expired. */
  async #decode(actor: Actor, cursor: string): Promise<LogPosition> {
    const value = this.#codec(actor).decode(cursor, isCursorValue);
    if ((await logTime(this.#d.db)).getTime() - value.t > taskEventRetentionMs) {
      throw new AppError(
        ErrorCode.InvalidInput,
        'after: this cursor is older than the 24 hours of task events kept; reconcile through listContents, then subscribe without after.',
        { field: 'after', reason: 'cursor_expired' },
      );
    }
    return { tx: BigInt(value.x), seq: BigInt(value.s) };
  }
}

function cursorOf(event: LoggedTaskEvent): CursorValue {
  return {
    x: event.position.tx.toString(),
    s: event.position.seq.toString(),
    t: event.at.getTime(),
  };
}

function isCursorValue(value: unknown): value is CursorValue {
  const v = value as Partial<CursorValue>;
  return (
    typeof v?.x === 'string' &&
    /^\d{1,20}$/.test(v.x) &&
    typeof v.s === 'string' &&
    /^\d{1,20}$/.test(v.s) &&
    typeof v.t === 'number'
  );
}
