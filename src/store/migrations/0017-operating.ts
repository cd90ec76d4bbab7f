import { type Kysely, sql } from 'kysely';

/**
 * The operator's side (issue 32):
 * - the audit log (§3): who did what to credentials and money, from where. Append-only: a
 *   trigger refuses every UPDATE, so an entry once written says what happened; rows leave only
 *   by the retention chore's DELETE of old ones;
 * - an operator's deduction is a ledger reason of its own (§1), so usage and the account's
 *   history tell a correction from a generation's debit;
 * - a model's status set by an admin at runtime (§4), over the configuration's, on every node,
 *   and the catalogue the fleet last put in use (what a reload compares with);
 * - the HTTP status a model server answered a failed run with (§1), beside its detail.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // A model's status set by an admin at runtime, over the configuration's, on every node.
  await sql`
    CREATE TABLE model_status (
      model_id text PRIMARY KEY,
      status text NOT NULL CHECK (status IN ('ready', 'maintenance', 'deprecated')),
      changed_at timestamptz NOT NULL
    )`.execute(db);
  // The catalogue the fleet last put in use (store/catalogue.store.ts): one row.
  await sql`
    CREATE TABLE model_catalogue (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      models jsonb NOT NULL,
      changed_at timestamptz NOT NULL
    )`.execute(db);
  // The status a model server answered a failed run with: operators see it beside the detail.
  await sql`ALTER TABLE task_attempts ADD COLUMN provider_status integer`.execute(db);
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
