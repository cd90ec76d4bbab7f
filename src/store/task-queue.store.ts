import { type QueryCreator, type Selectable, sql } from 'kysely';
import { FinishCode } from '../domain/finish-code.ts';
import { randomBase62 } from '../shared/ids.ts';
import { type AttemptRecord, recordAttempt } from './backend.store.ts';
import type { ContentRow } from './content.store.ts';
import { refundContent } from './credit.store.ts';
import type { Db, Queryable } from './database.ts';
import { insertMedia, mediaColumns, type NewMediaRow } from './media.store.ts';
import { executeNamed } from './prepared.ts';
import type { Tables, TasksTable } from './schema.ts';

export type TaskRow = Selectable<TasksTable>;

/** A task of the account; another account's ID finds nothing. */
export async function findTask(
  q: Queryable,
  accountId: string,
  id: string,
): Promise<TaskRow | undefined> {
  return q
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function findTasksOfContents(
  q: Queryable,
  contentIds: readonly string[],
): Promise<TaskRow[]> {
  if (contentIds.length === 0) return [];
  return q.selectFrom('tasks').selectAll().where('content_id', 'in', contentIds).execute();
}

/** A claimed task: the lease token fences every later write by this claimant. */
export interface ClaimedTask {
  readonly task: TaskRow & { lease_token: string };
  readonly content: ContentRow;
}

/**
 * Claims the next task under a lease, in one call of `atelier_claim_pooled` (migration 0016):
 * the pool whose next task is oldest among those with room on a backend in rotation, that
 * pool's next task in fair order, and a slot on one of its backends (`task.backend_id`; null
 * for a model without recorded backends). `FOR UPDATE SKIP LOCKED` lets many workers claim at
 * once without waiting on each other or taking the same row; claims of one capped pool are
 * serialised, so a backend never runs more than its cap.
 *
 * With `maxRunningPerAccount` above 0, a task whose account already has that many running is
 * passed over, counted again under a transaction-scoped lock on the account.
 */
export async function claimTask(
  db: Db,
  owner: string,
  leaseMs: number,
  maxRunningPerAccount = 0,
): Promise<ClaimedTask | undefined> {
  const token = randomBase62(16);
  // One round trip: claim the row and read its content in the same statement.
  const claim = sql<ClaimedRow>`
    SELECT (c.task).*, row_to_json(c.content) AS content
    FROM atelier_claim_pooled(${token}, ${owner}, ${leaseMs}, ${maxRunningPerAccount}) c`;
  const [row] = await executeNamed(db, claim.compile(db));
  return row === undefined ? undefined : claimedFrom(row, token);
}

/** A claim's row: the task's columns, and its content as JSON. */
type ClaimedRow = TaskRow & { content: ContentRow };

function claimedFrom({ content, ...task }: ClaimedRow, token: string): ClaimedTask {
  // row_to_json carries timestamps as text; the content's input is already JSON.
  const date = (value: Date | null) => (value === null ? null : new Date(value));
  return {
    task: { ...task, lease_token: token },
    content: {
      ...content,
      created_at: new Date(content.created_at),
      spent_at: date(content.spent_at),
      deleted_at: date(content.deleted_at),
    },
  };
}

/** What a claim made with a finish asks for (the arguments of {@link claimTask}). */
export interface ClaimRequest {
  readonly owner: string;
  readonly leaseMs: number;
  /** 0 for no limit. */
  readonly maxRunningPerAccount: number;
}

/** A successful run's outcome: what {@link finishOkThenClaim} records. */
export interface OkOutcome {
  readonly media: readonly NewMediaRow[];
  readonly attempt?: AttemptRecord;
}

/**
 * Finishes a successful run under its lease and then claims the next task, in one statement
 * and one commit (`atelier_finish_ok_then_claim`, migration 0021): a worker slot's cycle in one
 * round trip. The claim runs after the finish, so it sees the task finished (its account's
 * place and its backend's slot free). `finished` is undefined when the lease was no longer
 * the caller's; `claimed` when the queue had nothing for this worker.
 */
export async function finishOkThenClaim(
  db: Db,
  id: string,
  token: string,
  outcome: OkOutcome,
  claim: ClaimRequest,
): Promise<{ finished: TaskRow | undefined; claimed: ClaimedTask | undefined }> {
  const claimToken = randomBase62(16);
  const statement = sql<ClaimedRow & { claimed: boolean }>`
    SELECT r.claimed, (r.task).*, r.content
    FROM atelier_finish_ok_then_claim(${id}, ${token}, ${FinishCode.Ok}, ${mediaJson(outcome)},
      ${attemptsJson(outcome)}, ${claimToken}, ${claim.owner}, ${claim.leaseMs},
      ${claim.maxRunningPerAccount}) r`;
  const rows = await executeNamed(db, statement.compile(db));
  const finished = rows.find((row) => !row.claimed);
  const next = rows.find((row) => row.claimed);
  return {
    finished: finished === undefined ? undefined : withoutClaimedFlag(finished),
    claimed: next === undefined ? undefined : claimedFrom(withoutClaimedFlag(next), claimToken),
  };
}

/** A row of `atelier_finish_ok_then_claim` as the task row it carries. */
function withoutClaimedFlag<T extends { claimed: boolean }>({ claimed: _, ...row }: T) {
  return row;
}

/** How many tasks of an account are running now. */
export async function runningOf(q: Queryable, accountId: string): Promise<number> {
  const row = await q
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', '=', 'running')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Extends the lease; false when it was lost (expired and taken over, or the task finished). */
export async function renewLease(
  q: Queryable,
  id: string,
  token: string,
  leaseMs: number,
): Promise<boolean> {
  const result = await q
    .updateTable('tasks')
    .set({ lease_expires_at: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` })
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function writeProgress(
  q: Queryable,
  id: string,
  token: string,
  progress: number,
): Promise<boolean> {
  const result = await q
    .updateTable('tasks')
    .set({ progress: Math.min(1, Math.max(0, progress)) })
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Keeps an engine's note on the task (the remote job it started) for later attempts, with the
 * backend it was started on, fenced by the lease like progress: false when the task is no
 * longer this claimant's.
 */
export async function writeCheckpoint(
  q: Queryable,
  id: string,
  token: string,
  checkpoint: string,
): Promise<boolean> {
  const result = await q
    .updateTable('tasks')
    .set((eb) => ({ engine_checkpoint: checkpoint, checkpoint_backend_id: eb.ref('backend_id') }))
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Gives a claimed task back to the queue. `countAttempt: false` for a graceful shutdown (the
 * attempt did not fail); true after an engine's error or a failure another backend may not
 * have, whose backend the next claim then passes over when it can (`avoid`).
 */
export async function releaseTask(
  q: Queryable,
  id: string,
  token: string,
  countAttempt: boolean,
  avoid: string | null = null,
): Promise<boolean> {
  const result = await q
    .updateTable('tasks')
    .set((eb) => ({
      status: 'queued',
      lease_token: null,
      lease_owner: null,
      lease_expires_at: null,
      progress: 0,
      attempts: countAttempt ? eb.ref('attempts') : eb('attempts', '-', 1),
      ...(avoid === null ? {} : { avoid_backend_id: avoid }),
    }))
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Which finishes are allowed: the lease holder's, anyone's on an unfinished task, or the sweeper's. */
export type FinishGuard =
  | { readonly kind: 'lease'; readonly token: string }
  | { readonly kind: 'unfinished' }
  | { readonly kind: 'expired-lease' };

export interface FinishOutcome {
  readonly code: FinishCode;
  readonly message: string | null;
  readonly media?: readonly NewMediaRow[];
  /** The run on a pool's backend that ends with this finish, recorded with it (if it wins). */
  readonly attempt?: AttemptRecord;
}

/**
 * Finishes a task atomically: the status change (guarded, so exactly one finish wins and a
 * worker whose lease was taken over is refused), its media, and, for a non-zero code, the
 * refund. Returns the finished row, or undefined when the guard refused. Callers go through
 * `TaskFinisher` (services/), which records metrics and announces after the commit.
 *
 * A run's success under its lease refunds nothing, so it is one statement (`atelier_finish_ok`,
 * migration 0021; {@link finishOkThenClaim} is the same finish with the slot's next claim);
 * any other finish is a transaction, and a failure's refund reads the ledger in it.
 */
export async function finishTask(
  db: Db,
  id: string,
  guard: FinishGuard,
  outcome: FinishOutcome,
): Promise<TaskRow | undefined> {
  const media = outcome.media ?? [];
  const { attempt } = outcome;
  if (outcome.code === FinishCode.Ok && guard.kind === 'lease') {
    // A run's success (the queue's hottest write): one statement, the same SQL every time.
    const statement = sql<TaskRow>`
      SELECT * FROM atelier_finish_ok(${id}, ${guard.token}, ${FinishCode.Ok},
        ${mediaJson(outcome)}, ${attemptsJson(outcome)})`;
    return (await executeNamed(db, statement.compile(db)))[0];
  }
  return db.transaction().execute(async (trx) => {
    const task = await finishUpdate(trx, id, guard, outcome).returningAll().executeTakeFirst();
    if (task === undefined) return undefined;
    await insertMedia(trx, media);
    if (attempt !== undefined) await recordAttempt(trx, attempt);
    if (outcome.code !== FinishCode.Ok) await refundContent(trx, task.account_id, task.content_id);
    return task;
  });
}

/** A finish's media rows, for the finish functions (migration 0021). */
function mediaJson(outcome: { readonly media?: readonly NewMediaRow[] }): string {
  return JSON.stringify((outcome.media ?? []).map(mediaColumns));
}

/** A finish's run record as `task_attempts` rows: none for a model without backends. */
function attemptsJson({ attempt: a }: { readonly attempt?: AttemptRecord }): string {
  if (a === undefined) return '[]';
  return JSON.stringify([
    {
      task_id: a.taskId,
      attempt: a.attempt,
      backend_id: a.backendId,
      started_at: a.startedAt.toISOString(),
      outcome: a.outcome,
      detail: a.detail,
      provider_status: a.providerStatus,
    },
  ]);
}

/** The guarded status change to finished, for `finishTask`. */
function finishUpdate(
  q: QueryCreator<Tables>,
  id: string,
  guard: FinishGuard,
  outcome: FinishOutcome,
) {
  const update = q
    .updateTable('tasks')
    .set({
      status: 'finished',
      finish_code: outcome.code,
      finish_message: outcome.message,
      progress: outcome.code === FinishCode.Ok ? 1 : sql<number>`progress`,
      finished_at: sql<Date>`now()`,
      lease_token: null,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', id);
  if (guard.kind === 'lease') {
    return update.where('lease_token', '=', guard.token).where('status', '=', 'running');
  }
  if (guard.kind === 'unfinished') return update.where('status', '<>', 'finished');
  return update.where('status', '=', 'running').where('lease_expires_at', '<', sql<Date>`now()`);
}

/**
 * Returns tasks whose lease expired (their worker died) to the queue while they have attempts
 * left; returns the IDs of those that have none, for the caller to finish as lost.
 */
export async function recoverExpiredLeases(
  q: Queryable,
): Promise<{ requeued: number; exhausted: string[] }> {
  // A run on a backend is recorded as lost (its slot came back with the requeue).
  const { rows } = await sql<{ requeued: number }>`
    WITH expired AS (
      UPDATE tasks SET status = 'queued', lease_token = NULL, lease_owner = NULL,
        lease_expires_at = NULL, progress = 0
      WHERE status = 'running' AND lease_expires_at < now() AND attempts < max_attempts
      RETURNING id, attempts, backend_id, claimed_at
    ), lost AS (
      INSERT INTO task_attempts (task_id, attempt, backend_id, started_at, outcome, detail)
      SELECT id, attempts, backend_id, claimed_at, 'lost', 'its worker stopped renewing the lease'
      FROM expired WHERE backend_id IS NOT NULL AND claimed_at IS NOT NULL
      ON CONFLICT DO NOTHING
    )
    SELECT count(*)::int AS requeued FROM expired`.execute(q);

  const exhausted = await q
    .selectFrom('tasks')
    .select('id')
    .where('status', '=', 'running')
    .where('lease_expires_at', '<', sql<Date>`now()`)
    .whereRef('attempts', '>=', 'max_attempts')
    .execute();
  return { requeued: Number(rows[0]?.requeued ?? 0), exhausted: exhausted.map((r) => r.id) };
}

/** Queued tasks right now (for metrics and the benchmark). */
export async function countTasks(q: Queryable, status: TaskRow['status']): Promise<number> {
  const row = await q
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', status)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Unfinished tasks of one kind and status (for metrics, read at scrape time). */
export interface QueueDepthRow {
  readonly kind: ContentRow['kind'];
  readonly status: 'queued' | 'running';
  readonly tasks: number;
  /** Seconds since the oldest of these tasks was submitted (database clock). */
  readonly oldestAgeSeconds: number;
}

/** Queue depth and the oldest task's age by kind and status, in one query. */
export async function queueDepth(q: Queryable): Promise<QueueDepthRow[]> {
  const { rows } = await sql<{
    kind: ContentRow['kind'];
    status: 'queued' | 'running';
    tasks: number;
    oldest_age_seconds: number;
  }>`
    SELECT contents.kind, tasks.status, count(*)::int AS tasks,
      extract(epoch FROM now() - min(tasks.created_at))::float8 AS oldest_age_seconds
    FROM tasks JOIN contents ON contents.id = tasks.content_id
    WHERE tasks.status IN ('queued', 'running')
    GROUP BY contents.kind, tasks.status`.execute(q);
  return rows.map((r) => ({
    kind: r.kind,
    status: r.status,
    tasks: Number(r.tasks),
    oldestAgeSeconds: Math.max(0, Number(r.oldest_age_seconds)),
  }));
}
