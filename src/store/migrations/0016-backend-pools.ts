import { type Kysely, sql } from 'kysely';

/**
 * Models as pools of backends (issue 31, DESIGN.md "Fleets").
 *
 * - `backends`: one row per backend that has something to hold — a cap, health, or a choice
 *   among several — written from the configuration at start (store/backend.store.ts). Its
 *   health (in rotation or cooling down, failures in a row) is shared by every node.
 * - A task knows its pool (`model_id`, copied from its content), its place in the pool's fair
 *   order (`fair_key`, set at submission), the backend its run holds a slot on (`backend_id`:
 *   a running task *is* the slot, so a lease that expires frees it), when that run was claimed,
 *   whose job its checkpoint names, and the backend that last failed to take it.
 * - `task_attempts`: each run of a task on a backend: where, from when to when, how it ended.
 * - `atelier_claim_pooled`: the claim, in one call (see below).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE backends (
      id text PRIMARY KEY,
      model_id text NOT NULL,
      name text NOT NULL,
      engine text NOT NULL,
      max_concurrent integer CHECK (max_concurrent > 0),
      priority integer NOT NULL,
      weight integer NOT NULL CHECK (weight > 0),
      state text NOT NULL DEFAULT 'up' CHECK (state IN ('up', 'down')),
      failures integer NOT NULL DEFAULT 0,
      down_until timestamptz,
      next_probe_at timestamptz,
      last_error text,
      changed_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX backends_of_model ON backends (model_id)`.execute(db);

  await sql`ALTER TABLE tasks ADD COLUMN model_id text`.execute(db);
  await sql`
    UPDATE tasks SET model_id = contents.model_id
    FROM contents WHERE contents.id = tasks.content_id`.execute(db);
  await sql`ALTER TABLE tasks ALTER COLUMN model_id SET NOT NULL`.execute(db);
  await sql`ALTER TABLE tasks ADD COLUMN fair_key bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE tasks ADD COLUMN backend_id text`.execute(db);
  await sql`ALTER TABLE tasks ADD COLUMN claimed_at timestamptz`.execute(db);
  await sql`ALTER TABLE tasks ADD COLUMN checkpoint_backend_id text`.execute(db);
  await sql`ALTER TABLE tasks ADD COLUMN avoid_backend_id text`.execute(db);
  // The queue is read by pool now: its next task, a task's place in it, an account's last.
  await sql`DROP INDEX tasks_queued`.execute(db);
  await sql`
    CREATE INDEX tasks_pool_queue ON tasks (model_id, fair_key, created_at)
    WHERE status = 'queued'`.execute(db);
  await sql`
    CREATE INDEX tasks_pool_account ON tasks (model_id, account_id, fair_key)
    WHERE status = 'queued'`.execute(db);
  // A pool's runs: how many each backend holds, and the last one started (fair_key's clock).
  await sql`
    CREATE INDEX tasks_pool_running ON tasks (model_id, backend_id, fair_key)
    WHERE status = 'running'`.execute(db);

  await sql`
    CREATE TABLE task_attempts (
      task_id text NOT NULL REFERENCES tasks (id),
      attempt integer NOT NULL,
      backend_id text NOT NULL,
      started_at timestamptz NOT NULL,
      ended_at timestamptz NOT NULL DEFAULT now(),
      outcome text NOT NULL,
      detail text,
      PRIMARY KEY (task_id, attempt)
    )`.execute(db);
  await sql`CREATE INDEX task_attempts_recent ON task_attempts (backend_id, ended_at)`.execute(db);

  // The claim. (1) The pool to serve: of the models with queued tasks (found by skipping
  // through the index, one probe per model, however deep a queue is) that have room on a
  // backend in rotation, or no recorded backends at all, the one whose next task is oldest. A
  // saturated pool is passed over at the cost of that one probe, so it never holds up the
  // others. (2) Its next task in fair order, of an account under its cap, skipping tasks
  // another claim holds. (3) Under the pool's lock (claims of one pool are serialised, so two
  // claims never both see the last free slot), a backend: where the task's job may already be
  // (its checkpoint's backend, else its last run's, unless that backend failed to take it) while
  // that backend is in rotation, waiting for its slot if need be (the job is resumed there, or
  // found by the ID it was sent with, never sent to a second server); else the first tier with
  // room, then not the backend that just failed to take it, then the least loaded for its
  // weight. The
  // per-account cap is counted again under the account's lock, as in 0011. A pool found full
  // or capped is passed over and the next tried. Each statement takes a fresh snapshot (READ
  // COMMITTED), so counts made after a lock see the claims committed before it.
  await sql`
    CREATE FUNCTION atelier_claim_pooled(
      claim_token text, claim_owner text, lease_ms bigint, max_running integer
    ) RETURNS TABLE (task tasks, content contents) LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      passed text[] := '{}';
      pool text;
      pooled boolean;
      capped boolean;
      candidate record;
      resume text;
      chosen text;
    BEGIN
      FOR round IN 1..8 LOOP
        pool := NULL;
        WITH RECURSIVE queued(model_id) AS (
          (SELECT t.model_id FROM tasks t WHERE t.status = 'queued' ORDER BY t.model_id LIMIT 1)
          UNION ALL
          SELECT (SELECT t.model_id FROM tasks t
                  WHERE t.status = 'queued' AND t.model_id > q.model_id
                  ORDER BY t.model_id LIMIT 1)
          FROM queued q WHERE q.model_id IS NOT NULL
        )
        SELECT q.model_id INTO pool
        FROM queued q
        CROSS JOIN LATERAL (
          SELECT t.created_at FROM tasks t
          WHERE t.model_id = q.model_id AND t.status = 'queued'
          ORDER BY t.fair_key, t.created_at LIMIT 1
        ) head
        WHERE q.model_id IS NOT NULL AND q.model_id <> ALL (passed) AND (
          NOT EXISTS (SELECT 1 FROM backends b WHERE b.model_id = q.model_id)
          OR EXISTS (
            SELECT 1 FROM backends b
            WHERE b.model_id = q.model_id AND b.state = 'up' AND (
              b.max_concurrent IS NULL OR b.max_concurrent > (
                SELECT count(*) FROM tasks r
                WHERE r.model_id = q.model_id AND r.backend_id = b.id AND r.status = 'running'))))
        ORDER BY head.created_at LIMIT 1;
        IF pool IS NULL THEN
          RETURN;
        END IF;

        SELECT t.id, t.account_id, t.checkpoint_backend_id, t.backend_id,
          t.avoid_backend_id INTO candidate
        FROM tasks t
        WHERE t.model_id = pool AND t.status = 'queued' AND (max_running = 0 OR (
          SELECT count(*) FROM tasks r WHERE r.account_id = t.account_id AND r.status = 'running'
        ) < max_running)
        ORDER BY t.fair_key, t.created_at LIMIT 1
        FOR UPDATE OF t SKIP LOCKED;
        IF NOT FOUND THEN
          passed := passed || pool;
          CONTINUE;
        END IF;

        SELECT count(*) > 0, bool_or(b.max_concurrent IS NOT NULL) INTO pooled, capped
        FROM backends b WHERE b.model_id = pool;
        IF capped THEN
          PERFORM pg_advisory_xact_lock(hashtext('atelier-pool:' || pool));
        END IF;
        IF max_running > 0 THEN
          PERFORM pg_advisory_xact_lock(hashtext('atelier-claim:' || candidate.account_id));
          IF (SELECT count(*) FROM tasks r
              WHERE r.account_id = candidate.account_id AND r.status = 'running') >= max_running
          THEN
            CONTINUE;
          END IF;
        END IF;

        chosen := NULL;
        resume := coalesce(candidate.checkpoint_backend_id, candidate.backend_id);
        IF resume IS NOT DISTINCT FROM candidate.avoid_backend_id THEN
          resume := NULL;
        END IF;
        IF pooled THEN
          SELECT b.id INTO chosen
          FROM backends b
          CROSS JOIN LATERAL (
            SELECT count(*) AS running FROM tasks r
            WHERE r.model_id = pool AND r.backend_id = b.id AND r.status = 'running'
          ) load
          WHERE b.model_id = pool AND b.state = 'up'
            AND (b.max_concurrent IS NULL OR b.max_concurrent > load.running)
            AND (resume IS NULL OR b.id = resume
              OR NOT EXISTS (SELECT 1 FROM backends c WHERE c.id = resume AND c.state = 'up'))
          ORDER BY b.priority, b.id IS NOT DISTINCT FROM candidate.avoid_backend_id,
            load.running::float8 / b.weight, random()
          LIMIT 1;
          IF chosen IS NULL THEN
            passed := passed || pool;
            CONTINUE;
          END IF;
        END IF;

        RETURN QUERY
          WITH claimed AS (
            UPDATE tasks SET
              status = 'running',
              lease_token = claim_token,
              lease_owner = claim_owner,
              lease_expires_at = now() + lease_ms * interval '1 millisecond',
              attempts = attempts + 1,
              started_at = coalesce(started_at, now()),
              claimed_at = clock_timestamp(),
              backend_id = chosen
            WHERE id = candidate.id
            RETURNING tasks
          )
          SELECT claimed.tasks, contents FROM claimed
          JOIN contents ON contents.id = (claimed.tasks).content_id;
        RETURN;
      END LOOP;
    END
    $fn$`.execute(db);
}
