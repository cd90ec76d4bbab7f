import { type Selectable, sql } from 'kysely';
import type { BackendState, HealthRule, PoolBackend } from '../domain/backends.ts';
import type { Queryable } from './database.ts';
import type { BackendsTable } from './schema.ts';

export type BackendRow = Selectable<BackendsTable>;

/**
 * Writes the configured backends of `models`: new ones join in rotation; known ones take the
 * configured cap, tier and weight and keep their health; those no longer configured for these
 * models are removed (a run still holding a slot on one finishes; its slot is then gone).
 */
export async function syncBackends(
  q: Queryable,
  models: readonly string[],
  backends: readonly PoolBackend[],
): Promise<void> {
  await q.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('backends')
      .where('model_id', 'in', models.length > 0 ? models : [''])
      .where('id', 'not in', backends.length > 0 ? backends.map((b) => b.id) : [''])
      .execute();
    if (backends.length === 0) return;
    await trx
      .insertInto('backends')
      .values(
        backends.map((b) => ({
          id: b.id,
          model_id: b.modelId,
          name: b.name,
          engine: b.engine,
          max_concurrent: b.maxConcurrent,
          priority: b.priority,
          weight: b.weight,
        })),
      )
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          model_id: eb.ref('excluded.model_id'),
          name: eb.ref('excluded.name'),
          engine: eb.ref('excluded.engine'),
          max_concurrent: eb.ref('excluded.max_concurrent'),
          priority: eb.ref('excluded.priority'),
          weight: eb.ref('excluded.weight'),
        })),
      )
      .execute();
  });
}

/** A backend's health after a change; `changed`: it went down or came back just now. */
export interface HealthChange {
  readonly state: 'up' | 'down';
  readonly failures: number;
  readonly changed: boolean;
}

/**
 * A run the backend answered (a success, or a failure of the work itself): its failures in a
 * row are over, and a backend taken out meanwhile is back. Nothing is written when there is
 * nothing to undo, so a healthy backend costs no write per run.
 */
export async function backendAnswered(q: Queryable, id: string): Promise<HealthChange | undefined> {
  const { rows } = await sql<{ was: 'up' | 'down' }>`
    WITH before AS (
      SELECT id, state AS was FROM backends
      WHERE id = ${id} AND (failures > 0 OR state = 'down') FOR UPDATE
    )
    UPDATE backends SET failures = 0, state = 'up', down_until = NULL,
      changed_at = CASE WHEN before.was = 'down' THEN now() ELSE backends.changed_at END
    FROM before WHERE backends.id = before.id
    RETURNING before.was`.execute(q);
  const [row] = rows;
  return row === undefined ? undefined : { state: 'up', failures: 0, changed: row.was === 'down' };
}

/**
 * A retryable failure of the backend (no answer, an overloaded or failing server, a failed
 * probe): one more in a row, and at the rule's count it goes out of rotation until
 * `cooldownSeconds` from now. Undefined for a backend no longer configured.
 */
export async function backendFailed(
  q: Queryable,
  id: string,
  rule: HealthRule,
  error: string,
): Promise<HealthChange | undefined> {
  const { rows } = await sql<{ state: 'up' | 'down'; failures: number; was: 'up' | 'down' }>`
    WITH before AS (SELECT id, state AS was FROM backends WHERE id = ${id} FOR UPDATE)
    UPDATE backends SET
      failures = backends.failures + 1,
      last_error = ${error},
      state = CASE WHEN backends.failures + 1 >= ${rule.failuresBeforeCooldown}
        THEN 'down' ELSE backends.state END,
      down_until = CASE
        WHEN backends.state = 'up' AND backends.failures + 1 >= ${rule.failuresBeforeCooldown}
        THEN now() + ${rule.cooldownSeconds} * interval '1 second'
        ELSE backends.down_until END,
      changed_at = CASE
        WHEN backends.state = 'up' AND backends.failures + 1 >= ${rule.failuresBeforeCooldown}
        THEN now() ELSE backends.changed_at END
    FROM before WHERE backends.id = before.id
    RETURNING backends.state, backends.failures, before.was`.execute(q);
  const [row] = rows;
  return row === undefined
    ? undefined
    : { state: row.state, failures: row.failures, changed: row.was !== row.state };
}

/** What a backend is due for: a probe to come back (down) or a routine one (up). */
export interface DueCheck {
  readonly id: string;
  readonly state: 'up' | 'down';
}

/**
 * Of `backends` (this node's, with their rules), those due a check, each taken by this node
 * alone: a down backend whose cooldown is over has its next window set now (so no other node
 * probes it meanwhile); an up backend whose routine probe is due (`probes` lists those this
 * node can probe) has its next one set.
 */
export async function takeDueChecks(
  q: Queryable,
  backends: ReadonlyArray<{
    readonly id: string;
    readonly rule: HealthRule;
    readonly probes: boolean;
  }>,
): Promise<DueCheck[]> {
  if (backends.length === 0) return [];
  const { rows } = await sql<DueCheck>`
    WITH mine AS (
      SELECT * FROM unnest(
        ${backends.map((b) => b.id)}::text[],
        ${backends.map((b) => b.rule.cooldownSeconds)}::integer[],
        ${backends.map((b) => (b.probes ? b.rule.probeSeconds : 0))}::integer[]
      ) AS m(id, cooldown_seconds, probe_seconds)
    )
    UPDATE backends SET
      down_until = CASE WHEN backends.state = 'down'
        THEN now() + mine.cooldown_seconds * interval '1 second' ELSE backends.down_until END,
      next_probe_at = CASE WHEN backends.state = 'up'
        THEN now() + mine.probe_seconds * interval '1 second' ELSE backends.next_probe_at END
    FROM mine
    WHERE backends.id = mine.id AND (
      (backends.state = 'down' AND backends.down_until <= now())
      OR (backends.state = 'up' AND mine.probe_seconds > 0
        AND (backends.next_probe_at IS NULL OR backends.next_probe_at <= now())))
    RETURNING backends.id, backends.state`.execute(q);
  return rows;
}

/**
 * A down backend back in rotation: its probe answered (failures in a row forgotten), or, for
 * an engine without a probe, its cooldown is over and the next run is its trial (the failures
 * kept, so one more failure takes it out again).
 */
export async function backendBack(q: Queryable, id: string, probed: boolean): Promise<boolean> {
  const result = await q
    .updateTable('backends')
    .set((eb) => ({
      state: 'up',
      down_until: null,
      failures: probed ? 0 : eb.ref('failures'),
      changed_at: sql<Date>`now()`,
    }))
    .where('id', '=', id)
    .where('state', '=', 'down')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A failed probe of a down backend: it stays out; the error is kept for the operator. */
export async function probeFailed(q: Queryable, id: string, error: string): Promise<void> {
  await q.updateTable('backends').set({ last_error: error }).where('id', '=', id).execute();
}

/** Every recorded backend with its runs and its pool's queue, in one query. */
export async function backendStates(q: Queryable): Promise<BackendState[]> {
  const { rows } = await sql<{
    id: string;
    model_id: string;
    name: string;
    engine: string;
    state: 'up' | 'down';
    failures: number;
    max_concurrent: number | null;
    priority: number;
    weight: number;
    in_flight: number;
    queued: number;
    down_until: Date | null;
    last_error: string | null;
    changed_at: Date;
  }>`
    SELECT b.*,
      (SELECT count(*)::int FROM tasks r
        WHERE r.model_id = b.model_id AND r.backend_id = b.id AND r.status = 'running')
        AS in_flight,
      coalesce(p.queued, 0) AS queued
    FROM backends b
    LEFT JOIN (
      SELECT model_id, count(*)::int AS queued FROM tasks WHERE status = 'queued'
      GROUP BY model_id
    ) p ON p.model_id = b.model_id
    ORDER BY b.model_id, b.priority, b.name`.execute(q);
  return rows.map((r) => ({
    id: r.id,
    modelId: r.model_id,
    name: r.name,
    engine: r.engine,
    state: r.state,
    failures: r.failures,
    maxConcurrent: r.max_concurrent,
    priority: r.priority,
    weight: r.weight,
    inFlight: r.in_flight,
    queued: r.queued,
    downUntil: r.down_until === null ? null : new Date(r.down_until),
    lastError: r.last_error,
    changedAt: new Date(r.changed_at),
  }));
}

/** One run of a task on a backend, as it ended. */
export interface AttemptRecord {
  readonly taskId: string;
  readonly attempt: number;
  readonly backendId: string;
  readonly startedAt: Date;
  readonly outcome: 'ok' | 'failed' | 'failed_over' | 'error' | 'stopped';
  readonly detail: string | null;
  /** The HTTP status the model server answered the failed call with, if it answered. */
  readonly providerStatus: number | null;
}

/** Records a run's end (a second record of one attempt changes nothing). */
export async function recordAttempt(q: Queryable, a: AttemptRecord): Promise<void> {
  await q
    .insertInto('task_attempts')
    .values({
      task_id: a.taskId,
      attempt: a.attempt,
      backend_id: a.backendId,
      started_at: a.startedAt,
      outcome: a.outcome,
      detail: a.detail,
      provider_status: a.providerStatus,
    })
    .onConflict((oc) => oc.columns(['task_id', 'attempt']).doNothing())
    .execute();
}
