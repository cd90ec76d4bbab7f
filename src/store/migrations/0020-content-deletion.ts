import { type Kysely, sql } from 'kysely';

/**
 * Deleting a generation (`deleteContent`, issue 33): its media rows and files go, but the
 * content row stays, marked with when it was deleted, because what it was charged and refunded
 * is history: the usage report and the task stay as they were (deleting is not a refund), and
 * an idempotency key resent after a deletion still finds it and charges nothing. Every read of
 * an account's generations skips a deleted one, which answers as not found.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE contents ADD COLUMN deleted_at timestamptz`.execute(db);
}
