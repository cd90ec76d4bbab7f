import { sql } from 'kysely';
import type { Queryable } from './database.ts';
import type { TaskStatus } from './schema.ts';

/**
 * Reads of the task event log (migration 0013). A position is (tx, seq): the writing
 * transaction's ID and the event's number, both 64-bit, kept as bigint here.
 */
export interface LogPosition {
  readonly tx: bigint;
  readonly seq: bigint;
}

/** One logged change: the task as it was right after it. */
export interface LoggedTaskEvent {
  readonly position: LogPosition;
  readonly at: Date;
  readonly accountId: string;
  readonly task: {
    readonly id: string;
    readonly content_id: string;
    readonly status: TaskStatus;
    readonly progress: number;
    readonly finish_code: number | null;
    readonly finish_message: string | null;
    readonly created_at: Date;
    readonly started_at: Date | null;
    readonly finished_at: Date | null;
  };
}

export function isAfter(a: LogPosition, b: LogPosition): boolean {
  return a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq);
}

interface EventRow {
  tx: string;
  seq: string;
  at: Date | string;
  account_id: string;
  task_id: string;
  content_id: string;
  status: TaskStatus;
  progress: number;
  finish_code: number | null;
  finish_message: string | null;
  created_at: Date | string;
  started_at: Date | string | null;
  finished_at: Date | string | null;
  deliverable?: boolean;
}

const columns = sql`e.tx::text AS tx, e.seq::text AS seq, e.at, e.account_id, e.task_id,
  e.content_id, e.status, e.progress, e.finish_code, e.finish_message, e.created_at,
  e.started_at, e.finished_at`;

const date = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const maybeDate = (value: Date | string | null) => (value === null ? null : date(value));

function toEvent(row: EventRow): LoggedTaskEvent {
  return {
    position: { tx: BigInt(row.tx), seq: BigInt(row.seq) },
    at: date(row.at),
    accountId: row.account_id,
    task: {
      id: row.task_id,
      content_id: row.content_id,
      status: row.status,
      progress: row.progress,
      finish_code: row.finish_code,
      finish_message: row.finish_message,
      created_at: date(row.created_at),
      started_at: maybeDate(row.started_at),
      finished_at: maybeDate(row.finished_at),
    },
  };
}

/**
 * Where a reader starting now begins: every event of a transaction older than the oldest one
 * running is history; everything from that transaction on is still to come.
 */
export async function logHead(q: Queryable): Promise<LogPosition> {
  const { rows } = await sql<{ xmin: string }>`
    SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`.execute(q);
  return { tx: BigInt(rows[0]!.xmin), seq: 0n };
}

/**
 * Events after `from`, in log order, up to `limit`, each marked deliverable when no
 * transaction that could still commit an event before it is running. A reader delivers the
 * deliverable ones and reads again later for the rest.
 */
export async function readLog(
  q: Queryable,
  from: LogPosition,
  limit: number,
): Promise<{ event: LoggedTaskEvent; deliverable: boolean }[]> {
  const { rows } = await sql<EventRow>`
    SELECT ${columns}, e.tx < s.xmin AS deliverable
    FROM task_events e, (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) s
    WHERE (e.tx, e.seq) > (${from.tx.toString()}::xid8, ${from.seq.toString()}::bigint)
    ORDER BY e.tx, e.seq
    LIMIT ${limit}`.execute(q);
  return rows.map((row) => ({ event: toEvent(row), deliverable: row.deliverable === true }));
}

/** An account's (or one task's) events in (after, upTo], in log order, a page at a time. */
export async function replayLog(
  q: Queryable,
  filter: { accountId: string; taskId?: string | undefined },
  after: LogPosition,
  upTo: LogPosition,
  limit: number,
): Promise<LoggedTaskEvent[]> {
  const { rows } = await sql<EventRow>`
    SELECT ${columns} FROM task_events e
    WHERE e.account_id = ${filter.accountId}
      ${filter.taskId === undefined ? sql`` : sql`AND e.task_id = ${filter.taskId}`}
      AND (e.tx, e.seq) > (${after.tx.toString()}::xid8, ${after.seq.toString()}::bigint)
      AND (e.tx, e.seq) <= (${upTo.tx.toString()}::xid8, ${upTo.seq.toString()}::bigint)
    ORDER BY e.tx, e.seq
    LIMIT ${limit}`.execute(q);
  return rows.map(toEvent);
}

/** The newest event of a task at or before `upTo`, if the log still holds one. */
export async function latestTaskEvent(
  q: Queryable,
  accountId: string,
  taskId: string,
  upTo: LogPosition,
): Promise<LoggedTaskEvent | undefined> {
  const { rows } = await sql<EventRow>`
    SELECT ${columns} FROM task_events e
    WHERE e.account_id = ${accountId} AND e.task_id = ${taskId}
      AND (e.tx, e.seq) <= (${upTo.tx.toString()}::xid8, ${upTo.seq.toString()}::bigint)
    ORDER BY e.seq DESC
    LIMIT 1`.execute(q);
  return rows[0] === undefined ? undefined : toEvent(rows[0]);
}

/** Whether the task's finish is at or before `at`: a client holding that cursor has seen it. */
export async function finishedBy(
  q: Queryable,
  accountId: string,
  taskId: string,
  at: LogPosition,
): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM task_events e
      WHERE e.account_id = ${accountId} AND e.task_id = ${taskId} AND e.status = 'finished'
        AND (e.tx, e.seq) <= (${at.tx.toString()}::xid8, ${at.seq.toString()}::bigint)
    ) AS found`.execute(q);
  return rows[0]?.found === true;
}

/** Events deleted by one statement of {@link pruneLog}, each well inside the statement bound. */
const pruneBatch = 5_000;

/**
 * Deletes events older than `olderThanMs` by the database's clock, the one that stamped
 * them (`at` defaults to `now()`), a batch per statement (a day of a busy service's events in
 * one DELETE would outlast `DATABASE_TIMEOUT_MS`); returns how many.
 */
export async function pruneLog(q: Queryable, olderThanMs: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await q
      .deleteFrom('task_events')
      .where('seq', 'in', (eb) =>
        eb
          .selectFrom('task_events')
          .select('seq')
          .where('at', '<', sql<Date>`now() - ${olderThanMs} * interval '1 millisecond'`)
          .limit(pruneBatch),
      )
      .executeTakeFirst();
    const batch = Number(result.numDeletedRows);
    deleted += batch;
    if (batch < pruneBatch) return deleted;
  }
}

/** The database's time: the clock the log's `at` is written on, so the one to judge it by. */
export async function logTime(q: Queryable): Promise<Date> {
  const { rows } = await sql<{ now: Date | string }>`SELECT now() AS now`.execute(q);
  return new Date(rows[0]!.now);
}
