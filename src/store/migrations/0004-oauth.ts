import { type Kysely, sql } from 'kysely';

/** The authorization server for MCP clients: browser sessions, pending requests, codes, tokens, consents. */
export async function up(db: Kysely<any>): Promise<void> {
  // Only hashes of session ids are stored; the cookie holds the id itself.
  await sql`
    CREATE TABLE browser_sessions (
      id_hash text PRIMARY KEY,
      account_id text REFERENCES accounts (id),
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_active_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE pending_authorizations (
      session_hash text PRIMARY KEY REFERENCES browser_sessions (id_hash) ON DELETE CASCADE,
      client_id text NOT NULL,
      redirect_uri text NOT NULL,
      resource text NOT NULL,
      scope text NOT NULL,
      state text NOT NULL,
      code_challenge text NOT NULL,
      expires_at timestamptz NOT NULL
    )`.execute(db);

  await sql`
    CREATE TABLE oauth_codes (
      code_hash text PRIMARY KEY,
      client_id text NOT NULL,
      account_id text NOT NULL REFERENCES accounts (id),
      redirect_uri text NOT NULL,
      resource text NOT NULL,
      scope text NOT NULL,
      code_challenge text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX oauth_codes_consent ON oauth_codes (account_id, client_id)`.execute(db);

  await sql`
    CREATE TABLE oauth_tokens (
      jti text PRIMARY KEY,
      client_id text NOT NULL,
      account_id text NOT NULL REFERENCES accounts (id),
      scope text NOT NULL,
      resource text NOT NULL,
      code_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX oauth_tokens_consent ON oauth_tokens (account_id, client_id)`.execute(db);
  await sql`CREATE INDEX oauth_tokens_code ON oauth_tokens (code_hash)`.execute(db);

  // A consent, remembered per (account, client): what the account sees as an MCP connection.
  await sql`
    CREATE TABLE mcp_connections (
      account_id text NOT NULL REFERENCES accounts (id),
      client_id text NOT NULL,
      client_name text,
      client_uri text,
      logo_uri text,
      scopes text NOT NULL,
      connected_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz,
      PRIMARY KEY (account_id, client_id)
    )`.execute(db);
}
