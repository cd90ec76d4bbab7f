import { sql } from 'kysely';
import type { Queryable } from './database.ts';

/** One hit counted in a fixed window: hits so far in it, and the milliseconds left of it. */
export interface WindowHit {
  readonly hits: number;
  readonly ttlMs: number;
}

/**
 * Counts `hits` on `key` in one statement, safe under any concurrency: a new key, or one whose
 * window has passed, starts a window of `windowMs` at `hits`; otherwise its count goes up by
 * `hits` (0 reads the count).
 */
export async function hitWindow(
  q: Queryable,
  key: string,
  windowMs: number,
  hits: number,
): Promise<WindowHit> {
  const { rows } = await sql<{ hits: number; ttl_ms: number }>`
    INSERT INTO rate_limits AS r (key, hits, reset_at)
    VALUES (${key}, ${hits}, now() + ${windowMs} * interval '1 millisecond')
    ON CONFLICT (key) DO UPDATE SET
      hits = CASE WHEN r.reset_at <= now() THEN excluded.hits ELSE r.hits + excluded.hits END,
      reset_at = CASE WHEN r.reset_at <= now() THEN excluded.reset_at ELSE r.reset_at END
    RETURNING r.hits, extract(epoch FROM r.reset_at - now())::float8 * 1000 AS ttl_ms`.execute(q);
  const row = rows[0]!;
  return { hits: Number(row.hits), ttlMs: Math.max(0, Math.ceil(Number(row.ttl_ms))) };
}

/** Forgets windows that ended before `olderThanMs` ago. */
export async function sweepWindows(q: Queryable, olderThanMs: number): Promise<void> {
  await sql`DELETE FROM rate_limits
    WHERE reset_at < now() - ${olderThanMs} * interval '1 millisecond'`.execute(q);
}
