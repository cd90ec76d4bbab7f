import { type Kysely, sql } from 'kysely';

/**
 * The capped claim in one round trip. Under the per-account cap a claim must count an
 * account's running tasks again after taking that account's claim lock, in a statement that
 * sees what other claimers committed meanwhile; from the client that took a transaction and
 * four round trips. Inside a PL/pgSQL function each statement takes a fresh snapshot (READ
 * COMMITTED), so the same steps run in one call, and the advisory lock is held until the
 * caller's statement commits.
 *
 * A candidate whose account filled up while we waited for its lock is passed over and the
 * next one tried (SKIP LOCKED keeps the ones already held out), so a slot does not go back to
 * sleep while claimable work waits. Returns the claimed row with its content, or nothing. The
 * content is read here, by the statement that saw the task: the caller's statement began
 * before this function's snapshots and might not see a submission committed since.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION atelier_claim_task(
      claim_token text, claim_owner text, lease_ms bigint, max_running integer
    ) RETURNS TABLE (task tasks, content contents) LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      candidate record;
    BEGIN
      FOR attempt IN 1..8 LOOP
        SELECT t.id, t.account_id INTO candidate FROM tasks t
        WHERE t.status = 'queued' AND (
          SELECT count(*) FROM tasks r WHERE r.account_id = t.account_id AND r.status = 'running'
        ) < max_running
        ORDER BY t.created_at LIMIT 1
        FOR UPDATE OF t SKIP LOCKED;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('atelier-claim:' || candidate.account_id));
        RETURN QUERY
          WITH claimed AS (
          UPDATE tasks SET
            status = 'running',
            lease_token = claim_token,
            lease_owner = claim_owner,
            lease_expires_at = now() + lease_ms * interval '1 millisecond',
            attempts = attempts + 1,
            started_at = coalesce(started_at, now())
          WHERE id = candidate.id AND (
            SELECT count(*) FROM tasks r
            WHERE r.account_id = candidate.account_id AND r.status = 'running'
          ) < max_running
          RETURNING tasks
          )
          SELECT claimed.tasks, contents FROM claimed
          JOIN contents ON contents.id = (claimed.tasks).content_id;
        IF FOUND THEN
          RETURN;
        END IF;
      END LOOP;
    END
    $fn$`.execute(db);
}
