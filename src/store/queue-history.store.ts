import { sql } from 'kysely';
import type { Queryable } from './database.ts';

/** How far back a point looks for tasks still waiting or running then. */
export const queueHistoryLookbackMs = 86_400_000; // 1 day

/** One point of the queue's history. */
export interface QueuePointRow {
  at: Date;
  /** Tasks submitted by `at` and not yet started then. */
  queued: number;
  /** Tasks started by `at` and not yet finished then. */
  running: number;
  /** Tasks submitted from `at` until the next point. */
  submitted: number;
  /** Their mean wait from submission to start, of those that started; null if none did. */
  mean_wait_seconds: number | null;
}

/**
 * The queue as it was at `points` instants from `from`, `stepMs` apart, read back from the
 * tasks' own times (submitted, first started, finished): nothing is sampled or kept for it. A
 * point counts the tasks submitted in the day before it (`queueHistoryLookbackMs`), through the
 * index on `tasks.created_at`; a task that waited longer than that is not counted.
 */
export async function queueHistory(
  q: Queryable,
  from: Date,
  stepMs: number,
  points: number,
  modelId: string | null,
): Promise<QueuePointRow[]> {
  const model = modelId === null ? sql`` : sql`AND t.model_id = ${modelId}`;
  const step = sql`make_interval(secs => ${stepMs / 1000})`;
  const lookback = sql`make_interval(secs => ${queueHistoryLookbackMs / 1000})`;
  const { rows } = await sql<QueuePointRow>`
    SELECT p.at,
      (SELECT count(*)::int FROM tasks t
        WHERE t.created_at <= p.at AND t.created_at > p.at - ${lookback} ${model}
          AND (t.started_at IS NULL OR t.started_at > p.at)
          AND (t.finished_at IS NULL OR t.finished_at > p.at)) AS queued,
      (SELECT count(*)::int FROM tasks t
        WHERE t.created_at <= p.at AND t.created_at > p.at - ${lookback} ${model}
          AND t.started_at <= p.at
          AND (t.finished_at IS NULL OR t.finished_at > p.at)) AS running,
      w.submitted, w.mean_wait_seconds
    FROM generate_series(0, ${points - 1}) AS i,
      LATERAL (SELECT ${from}::timestamptz + i * ${step} AS at) AS p,
      LATERAL (
        SELECT count(*)::int AS submitted,
          avg(extract(epoch FROM t.started_at - t.created_at))::float8 AS mean_wait_seconds
        FROM tasks t
        WHERE t.created_at >= p.at AND t.created_at < p.at + ${step} ${model}
      ) AS w
    ORDER BY p.at`.execute(q);
  return rows.map((r) => ({ ...r, at: new Date(r.at) }));
}
