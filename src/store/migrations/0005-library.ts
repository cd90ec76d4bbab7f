import { type Kysely, sql } from 'kysely';

/**
 * The account's own library: uploads (media that is `pending` until its bytes arrive and
 * pass the checks), elements made from the account's images, and avatars (a portrait and a
 * default voice). Elements and avatars are deleted softly, so a queued generation that names
 * one still runs.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE media
      ADD COLUMN state text NOT NULL DEFAULT 'ready' CHECK (state IN ('pending', 'ready')),
      ADD COLUMN upload_expires_at timestamptz`.execute(db);

  await sql`
    CREATE TABLE elements (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      kind text NOT NULL CHECK (kind IN ('character', 'object', 'style', 'scene')),
      name text NOT NULL,
      description text,
      media_id text NOT NULL REFERENCES media (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )`.execute(db);
  await sql`
    CREATE INDEX elements_account ON elements (account_id, created_at DESC, id DESC)
    WHERE deleted_at IS NULL`.execute(db);

  await sql`
    CREATE TABLE avatars (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      name text NOT NULL,
      portrait_media_id text NOT NULL REFERENCES media (id),
      voice_model_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )`.execute(db);
  await sql`
    CREATE INDEX avatars_account ON avatars (account_id, created_at DESC, id DESC)
    WHERE deleted_at IS NULL`.execute(db);
}
