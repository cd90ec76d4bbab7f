import { type Kysely, sql } from 'kysely';

/**
 * When a connection's revocation ended an unused authorization code (issue 30 §6). The
 * revocation used to mark such codes used, so their exchange was refused as "already used",
 * which a client could not make sense of; now it says the connection was revoked.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE oauth_codes ADD COLUMN revoked_at timestamptz`.execute(db);
}
