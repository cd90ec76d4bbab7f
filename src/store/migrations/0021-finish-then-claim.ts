import { type Kysely, sql } from 'kysely';

/**
 * A worker slot's finish and its next claim in one statement and one commit (issue 34).
 *
 * - `atelier_finish_ok`: a successful run's finish, fenced by its lease: the task finished with
 *   `ok_code` (`FinishCode.Ok`, passed in: finish codes are named in one table, in
 *   src/domain/finish-code.ts), and, only if that won, the run's record on its backend
 *   (`task_attempts`, none for a model without recorded backends; its start is the task's
 *   claim) and the media rows of its stored files. Returns the finished task, or nothing when
 *   the lease was no longer the caller's (taken over, or the task cancelled). The one
 *   implementation of that finish (store/task-queue.store.ts).
 * - `atelier_finish_ok_then_claim`: that finish, then `atelier_claim_pooled` (0016), in that
 *   order in one transaction, so the claim sees the task finished: its account's place and its
 *   backend's slot are free for the claim to take. Returns a row `(claimed = false, the
 *   finished task)` if the finish won and a row `(claimed = true, the task, its content as
 *   JSON)` if a task was claimed.
 *
 * A busy slot's cycle is one round trip and one commit instead of two, and its claim never
 * runs beside its own finish, finding the finishing task still in its account's place: on a
 * 2-core machine `bench/queue` went from 0.70× to 0.83× graphile-worker's rate
 * (docs/performance-runtime.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION atelier_finish_ok(
      finish_id text, finish_token text, ok_code integer, new_media jsonb, run_records jsonb
    ) RETURNS SETOF tasks LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      done tasks;
    BEGIN
      UPDATE tasks SET status = 'finished', finish_code = ok_code, finish_message = NULL,
        progress = 1, finished_at = now(), lease_token = NULL, lease_owner = NULL,
        lease_expires_at = NULL
      WHERE id = finish_id AND lease_token = finish_token AND status = 'running'
      RETURNING * INTO done;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      -- The run began at its claim, as the database wrote it: a JavaScript date would cut it
      -- to the millisecond, before the end of the run before it on the same slot.
      INSERT INTO task_attempts (task_id, attempt, backend_id, started_at, outcome, detail,
        provider_status)
      SELECT r.task_id, r.attempt, r.backend_id, coalesce(done.claimed_at, r.started_at),
        r.outcome, r.detail, r.provider_status
      FROM jsonb_populate_recordset(NULL::task_attempts, run_records) r
      ON CONFLICT (task_id, attempt) DO NOTHING;
      INSERT INTO media (id, account_id, content_id, position, kind, mime_type, bytes, width,
        height, duration_ms, storage_key, filename)
      SELECT m.id, m.account_id, m.content_id, m.position, m.kind, m.mime_type, m.bytes,
        m.width, m.height, m.duration_ms, m.storage_key, m.filename
      FROM jsonb_populate_recordset(NULL::media, new_media) m;
      RETURN NEXT done;
    END
    $fn$`.execute(db);

  await sql`
    CREATE FUNCTION atelier_finish_ok_then_claim(
      finish_id text, finish_token text, ok_code integer, new_media jsonb, run_records jsonb,
      claim_token text, claim_owner text, lease_ms bigint, max_running integer
    ) RETURNS TABLE (claimed boolean, task tasks, content json)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      done tasks;
    BEGIN
      SELECT * INTO done
      FROM atelier_finish_ok(finish_id, finish_token, ok_code, new_media, run_records);
      IF FOUND THEN
        RETURN QUERY SELECT false, done, NULL::json;
      END IF;
      -- A statement after the finish: it sees the finished task (same transaction, later
      -- command), so the task no longer counts as running for its account or its backend.
      RETURN QUERY
        SELECT true, c.task, row_to_json(c.content)
        FROM atelier_claim_pooled(claim_token, claim_owner, lease_ms, max_running) c;
    END
    $fn$`.execute(db);
}
