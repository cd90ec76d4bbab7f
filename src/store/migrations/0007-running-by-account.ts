import { type Kysely, sql } from 'kysely';

/**
 * The per-account cap on running tasks counts an account's running tasks at every claim: a
 * small partial index keeps that count from scanning the whole task history.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX tasks_running_by_account ON tasks (account_id) WHERE status = 'running'`.execute(
    db,
  );
}
