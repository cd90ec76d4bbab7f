import { type Kysely, sql } from 'kysely';

/**
 * The usage report (issue 32, store/usage.store.ts) reads a month of a year's submissions in
 * about 0.1 s: one range scan of each of these, by `created_at`, answered from the index
 * alone (index-only scans), then a hash join of the two on the content's ID. A content and its
 * task are inserted by one statement (submission.store.ts), so both carry the same
 * `created_at` and the same range selects both. Without them the report read every task (a
 * sequential scan of the table): 1 s for a month of a million tasks.
 *
 * What they cost: one more index entry per submitted content, and one per task row version.
 * A task's claim and finish already write new entries in its other indexes (they change
 * `status`, which partial indexes name), so they stay as they were; a refund writes one more.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE INDEX contents_usage ON contents (created_at)
    INCLUDE (id, account_id, kind, model_id, spender, credits_charged, credits_refunded)`.execute(
    db,
  );
  await sql`
    CREATE INDEX tasks_usage ON tasks (created_at)
    INCLUDE (content_id, id, status, finish_code, started_at, finished_at, backend_id)`.execute(db);
}
