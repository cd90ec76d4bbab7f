import { type Kysely, sql } from 'kysely';

/**
 * Uploads that never complete are swept once their URL has expired: a small partial index
 * finds them without reading the media of every result.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX media_pending_expiry ON media (upload_expires_at) WHERE state = 'pending'`.execute(
    db,
  );
}
