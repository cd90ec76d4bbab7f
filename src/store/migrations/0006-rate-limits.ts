import { type Kysely, sql } from 'kysely';

/**
 * Rate-limit windows shared by every node: one row per key (`graphql:acc_…`, `token:ip:…`),
 * counting hits until `reset_at`. Rows past their window are reused by the next hit or swept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE rate_limits (
      key text PRIMARY KEY,
      hits integer NOT NULL,
      reset_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX rate_limits_reset_at ON rate_limits (reset_at)`.execute(db);
}
