import { type Kysely, sql } from 'kysely';

/** Identities of identity providers linked to accounts, and the built-in provider's users. */
export async function up(db: Kysely<any>): Promise<void> {
  // (issuer, subject) names one person at one provider; it maps to exactly one account.
  await sql`
    CREATE TABLE identities (
      issuer text NOT NULL,
      subject text NOT NULL,
      account_id text NOT NULL REFERENCES accounts (id),
      email text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz,
      PRIMARY KEY (issuer, subject)
    )`.execute(db);
  await sql`CREATE INDEX identities_account ON identities (account_id)`.execute(db);

  await sql`
    CREATE TABLE idp_users (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      email text NOT NULL UNIQUE CHECK (email = lower(email)),
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}
