import { type Kysely, sql } from 'kysely';

/**
 * The task event log (issue 21): every change of a task's status, progress or finish, as a row
 * written by a trigger in the transaction that made the change, so no path (submission, claim,
 * progress, finish, lease sweep, the claim function) can change a task without its event.
 *
 * A reader orders events by (tx, seq) and takes only those whose transaction is older than the
 * oldest one still running (`pg_snapshot_xmin`): nothing can commit before them any more, so a
 * reader that remembers the last (tx, seq) it delivered never skips an event that committed
 * late. `seq` alone orders one task's events (its updates serialize on the task's row).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE task_events (
      seq bigserial PRIMARY KEY,
      tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
      at timestamptz NOT NULL DEFAULT now(),
      account_id text NOT NULL,
      task_id text NOT NULL,
      content_id text NOT NULL,
      status text NOT NULL,
      progress real NOT NULL,
      finish_code integer,
      finish_message text,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX task_events_position ON task_events (tx, seq)`.execute(db);
  // One index for an account's replay (its rows, then sorted) and a task's newest event.
  await sql`CREATE INDEX task_events_account ON task_events (account_id, task_id, seq)`.execute(db);
  // BRIN: rows arrive in time order, so pruning finds old ones without a B-tree to keep up.
  await sql`CREATE INDEX task_events_at ON task_events USING brin (at)`.execute(db);
  await sql`
    CREATE FUNCTION atelier_log_task_event() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'UPDATE' AND NEW.status = OLD.status AND NEW.progress = OLD.progress
          AND NEW.finish_code IS NOT DISTINCT FROM OLD.finish_code THEN
        RETURN NULL; -- a lease renewal or a checkpoint: nothing a client sees
      END IF;
      INSERT INTO task_events (account_id, task_id, content_id, status, progress, finish_code,
        finish_message, created_at, started_at, finished_at)
      VALUES (NEW.account_id, NEW.id, NEW.content_id, NEW.status, NEW.progress, NEW.finish_code,
        NEW.finish_message, NEW.created_at, NEW.started_at, NEW.finished_at);
      RETURN NULL;
    END $fn$`.execute(db);
  await sql`
    CREATE TRIGGER tasks_log_events AFTER INSERT OR UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION atelier_log_task_event()`.execute(db);
}
