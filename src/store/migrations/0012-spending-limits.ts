import { type Kysely, sql } from 'kysely';

/**
 * Spending limits of an account's credentials (issue 21). A spender is an API key's ID or
 * `mcp:<client_id>`; its limits are one row. Each (limit, period) it has spent in is a counter
 * row holding the cap it was charged under: `spent <= cap` is a CHECK, so two submissions
 * racing for the last credits of a limit serialize on the counter row like debits on a
 * balance, and the second fails in the same statement as its debit, changing nothing.
 * A content remembers who charged it and when, so a refund returns the credits to the counter
 * of the period it was spent in.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE spending_limits (
      account_id text NOT NULL REFERENCES accounts (id),
      spender text NOT NULL,
      credits jsonb NOT NULL,
      kinds text[],
      model_ids text[],
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, spender)
    )`.execute(db);
  await sql`
    CREATE TABLE spending_counters (
      account_id text NOT NULL REFERENCES accounts (id),
      spender text NOT NULL,
      category text NOT NULL,
      period text NOT NULL CHECK (period IN ('day', 'month')),
      period_start timestamptz NOT NULL,
      spent integer NOT NULL CHECK (spent >= 0),
      cap integer NOT NULL,
      CONSTRAINT spending_counters_within_cap CHECK (spent <= cap),
      PRIMARY KEY (account_id, spender, category, period, period_start)
    )`.execute(db);
  await sql`ALTER TABLE contents ADD COLUMN spender text, ADD COLUMN spent_at timestamptz`.execute(
    db,
  );
}
