import { sql } from 'kysely';
import type { PlacedTask, PoolSlotState } from '../domain/queue-place.ts';
import type { Queryable } from './database.ts';

/** Successful runs a backend's mean run time is taken over. */
const recentRuns = 20;

/**
 * The account's unfinished tasks among `taskIds`, each with its pool and its place: for a
 * queued one, the queued tasks of its pool ahead of it in start order (fair_key, then
 * submission), counted through the pool's queue index.
 */
export async function placedTasks(
  q: Queryable,
  accountId: string,
  taskIds: readonly string[],
): Promise<Map<string, PlacedTask & { modelId: string }>> {
  if (taskIds.length === 0) return new Map();
  const { rows } = await sql<{
    id: string;
    model_id: string;
    status: 'queued' | 'running';
    backend_id: string | null;
    claimed_at: Date | null;
    ahead: number | null;
  }>`
    SELECT t.id, t.model_id, t.status, t.backend_id, t.claimed_at,
      CASE WHEN t.status = 'queued' THEN (
        SELECT count(*)::int FROM tasks a
        WHERE a.model_id = t.model_id AND a.status = 'queued'
          AND (a.fair_key, a.created_at) < (t.fair_key, t.created_at)
      ) END AS ahead
    FROM tasks t
    WHERE t.id = ANY(${taskIds as string[]}::text[]) AND t.account_id = ${accountId}
      AND t.status IN ('queued', 'running')`.execute(q);
  return new Map(
    rows.map((r) => [
      r.id,
      {
        modelId: r.model_id,
        status: r.status,
        ahead: r.ahead ?? 0,
        backendId: r.backend_id,
        claimedAt: r.claimed_at === null ? null : new Date(r.claimed_at),
      },
    ]),
  );
}

/**
 * The recorded backends of `modelIds` with their runs now (when each was claimed) and the mean of their recent
 * successful runs (from `task_attempts`, newest first through its index). A model without
 * recorded backends has none here.
 */
export async function poolSlots(
  q: Queryable,
  modelIds: readonly string[],
): Promise<Map<string, PoolSlotState[]>> {
  const pools = new Map<string, PoolSlotState[]>();
  if (modelIds.length === 0) return pools;
  const { rows } = await sql<{
    id: string;
    model_id: string;
    state: 'up' | 'down';
    max_concurrent: number | null;
    running_since: number[] | null;
    mean_seconds: number | null;
    runs: number;
  }>`
    SELECT b.id, b.model_id, b.state, b.max_concurrent,
      (SELECT array_agg(extract(epoch FROM r.claimed_at) * 1000)::float8[] FROM tasks r
        WHERE r.model_id = b.model_id AND r.backend_id = b.id AND r.status = 'running')
        AS running_since,
      recent.mean_seconds, recent.runs
    FROM backends b
    CROSS JOIN LATERAL (
      SELECT avg(extract(epoch FROM a.ended_at - a.started_at))::float8 AS mean_seconds,
        count(*)::int AS runs
      FROM (
        SELECT ended_at, started_at FROM task_attempts
        WHERE backend_id = b.id AND outcome = 'ok'
        ORDER BY ended_at DESC LIMIT ${recentRuns}
      ) a
    ) recent
    WHERE b.model_id = ANY(${modelIds as string[]}::text[])`.execute(q);
  for (const r of rows) {
    const slot: PoolSlotState = {
      id: r.id,
      up: r.state === 'up',
      maxConcurrent: r.max_concurrent,
      runningSince: (r.running_since ?? []).map((ms) => new Date(Number(ms))),
      meanRunSeconds: r.mean_seconds === null ? null : Number(r.mean_seconds),
      recentRuns: r.runs,
    };
    const pool = pools.get(r.model_id);
    if (pool === undefined) pools.set(r.model_id, [slot]);
    else pool.push(slot);
  }
  return pools;
}

/** How many times each of the account's tasks among `taskIds` was started on a backend. */
export async function attemptCounts(
  q: Queryable,
  accountId: string,
  taskIds: readonly string[],
): Promise<Map<string, number>> {
  if (taskIds.length === 0) return new Map();
  const rows = await q
    .selectFrom('tasks')
    .select(['id', 'attempts'])
    .where('id', 'in', [...taskIds])
    .where('account_id', '=', accountId)
    .execute();
  return new Map(rows.map((r) => [r.id, r.attempts]));
}
