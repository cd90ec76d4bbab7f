import { type Kysely, sql } from 'kysely';

/**
 * An operator's deduction is a ledger reason of its own (issue 32 §1), so usage and the
 * account's history tell a correction from a generation's debit.
 *
 * The audit log (issue 32 §3): who did what to credentials and money, from where. Append-only:
 * a trigger refuses every UPDATE, so an entry once written says what happened; rows leave only
 * by the retention chore's DELETE of old ones.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_reason_check,
      ADD CONSTRAINT credit_ledger_reason_check
      CHECK (reason IN ('grant', 'debit', 'refund', 'deduction'))`.execute(db);
  await sql`
    CREATE TABLE audit_log (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at timestamptz NOT NULL,
      account_id text,
      action text NOT NULL,
      target text,
      detail jsonb,
      actor_account_id text,
      actor_credential text NOT NULL,
      actor_address text
    )`.execute(db);
  // An account reads its own entries, newest first; admins read everything by time.
  await sql`CREATE INDEX audit_log_account ON audit_log (account_id, seq DESC)`.execute(db);
  await sql`CREATE INDEX audit_log_at ON audit_log (at)`.execute(db);
  await sql`
    CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_log is append-only';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`.execute(db);
}
