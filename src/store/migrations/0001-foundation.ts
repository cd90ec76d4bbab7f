import { type Kysely, sql } from 'kysely';

/** Accounts, credit balances with their ledger, and API keys (issue: foundation). */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      alias text NOT NULL UNIQUE,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'deleted')),
      role text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
      api_key_access boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  // The CHECK is the last line of defence of DESIGN.md rule 4: whatever the code does,
  // a balance can never go below zero.
  await sql`
    CREATE TABLE credit_balances (
      account_id text NOT NULL REFERENCES accounts (id),
      category text NOT NULL,
      amount integer NOT NULL CHECK (amount >= 0),
      PRIMARY KEY (account_id, category)
    )`.execute(db);

  await sql`
    CREATE TABLE credit_ledger (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      account_id text NOT NULL REFERENCES accounts (id),
      category text NOT NULL,
      delta integer NOT NULL CHECK (delta <> 0),
      balance_after integer NOT NULL CHECK (balance_after >= 0),
      reason text NOT NULL CHECK (reason IN ('grant', 'debit', 'refund')),
      reference text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX credit_ledger_account ON credit_ledger (account_id, seq)`.execute(db);
  await sql`CREATE INDEX credit_ledger_reference ON credit_ledger (reference)`.execute(db);

  await sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      name text NOT NULL,
      prefix text NOT NULL,
      secret_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX api_keys_account ON api_keys (account_id, created_at)`.execute(db);
}
