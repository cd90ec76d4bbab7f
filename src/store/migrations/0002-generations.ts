import { type Kysely, sql } from 'kysely';

/** Generations: content (what was asked, what it cost), its task (the queue), and media. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE contents (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      kind text NOT NULL CHECK (kind IN ('image', 'video', 'speech', 'avatar')),
      model_id text NOT NULL,
      input jsonb NOT NULL,
      input_hash text NOT NULL,
      idempotency_key text,
      credits_charged integer NOT NULL CHECK (credits_charged >= 0),
      credits_refunded integer NOT NULL DEFAULT 0 CHECK (credits_refunded >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (credits_refunded <= credits_charged)
    )`.execute(db);
  // Same key, same account: one submission (the race between two is settled here).
  await sql`
    CREATE UNIQUE INDEX contents_idempotency ON contents (account_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL`.execute(db);
  await sql`CREATE INDEX contents_history ON contents (account_id, created_at DESC, id DESC)`.execute(
    db,
  );

  // The task table is the queue: queued rows are claimed with FOR UPDATE SKIP LOCKED; a
  // running row belongs to the lease holder named by lease_token until lease_expires_at.
  await sql`
    CREATE TABLE tasks (
      id text PRIMARY KEY,
      content_id text NOT NULL UNIQUE REFERENCES contents (id),
      account_id text NOT NULL REFERENCES accounts (id),
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'finished')),
      finish_code integer,
      finish_message text,
      progress real NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      lease_token text,
      lease_owner text,
      lease_expires_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      CHECK ((status = 'finished') = (finish_code IS NOT NULL)),
      CHECK (status <> 'running' OR lease_token IS NOT NULL)
    )`.execute(db);
  await sql`CREATE INDEX tasks_queued ON tasks (created_at) WHERE status = 'queued'`.execute(db);
  await sql`CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE status = 'running'`.execute(
    db,
  );

  await sql`
    CREATE TABLE media (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      content_id text REFERENCES contents (id),
      position integer NOT NULL DEFAULT 0,
      kind text NOT NULL CHECK (kind IN ('image', 'video', 'audio')),
      mime_type text NOT NULL,
      bytes integer NOT NULL CHECK (bytes >= 0),
      width integer,
      height integer,
      duration_ms integer,
      storage_key text NOT NULL,
      filename text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX media_content ON media (content_id, position)`.execute(db);

  // Secrets every node must share (the media URL signing key), created once, on first use.
  await sql`
    CREATE TABLE server_secrets (
      name text PRIMARY KEY,
      value text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}
