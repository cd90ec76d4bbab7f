import { type Kysely, sql } from 'kysely';

/**
 * Webhook endpoints of accounts, and the outbox of deliveries (issue 21). A task's finish
 * queues a delivery for each endpoint of its account that asked for that kind of event, from
 * the task event log's trigger, in the transaction that finished the task: a delivery can be
 * late, never lost. Secrets are sealed with a server key (signing needs the
 * secret itself, so it cannot be hashed).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      url text NOT NULL,
      description text NOT NULL DEFAULT '',
      events text[] NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_until timestamptz,
      enabled boolean NOT NULL DEFAULT true,
      disabled_at timestamptz,
      disabled_reason text,
      credits_low_below integer NOT NULL DEFAULT 100,
      -- The account's secret for generations that name a webhookUrl of their own: no URL or
      -- events of its own, never listed with the others, one per account.
      one_off boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX webhook_endpoints_one_off ON webhook_endpoints (account_id) WHERE one_off`.execute(
    db,
  );
  await sql`ALTER TABLE contents ADD COLUMN webhook_url text`.execute(db);
  await sql`CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at)`.execute(
    db,
  );
  await sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      one_off_url text,
      event_type text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz,
      delivered_at timestamptz
    )`.execute(db);
  await sql`
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending'`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at)`.execute(
    db,
  );
  await sql`
    CREATE TABLE webhook_attempts (
      id bigserial PRIMARY KEY,
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      at timestamptz NOT NULL,
      status_code integer,
      latency_ms integer NOT NULL,
      error text,
      response_excerpt text
    )`.execute(db);
  await sql`CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id)`.execute(
    db,
  );
  // Queued from the task event log's own trigger function (0013's, replaced here), so a
  // finish costs no second trigger, and an account without endpoints one index probe.
  await sql`
    CREATE OR REPLACE FUNCTION atelier_log_task_event() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      event_at timestamptz;
      hook_type text;
    BEGIN
      IF TG_OP = 'UPDATE' AND NEW.status = OLD.status AND NEW.progress = OLD.progress
          AND NEW.finish_code IS NOT DISTINCT FROM OLD.finish_code THEN
        RETURN NULL; -- a lease renewal or a checkpoint: nothing a client sees
      END IF;
      INSERT INTO task_events (account_id, task_id, content_id, status, progress, finish_code,
        finish_message, created_at, started_at, finished_at)
      VALUES (NEW.account_id, NEW.id, NEW.content_id, NEW.status, NEW.progress, NEW.finish_code,
        NEW.finish_message, NEW.created_at, NEW.started_at, NEW.finished_at)
      RETURNING at INTO event_at;
      IF NEW.status <> 'finished'
          OR NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE account_id = NEW.account_id) THEN
        RETURN NULL;
      END IF;
      hook_type := CASE NEW.finish_code WHEN 0 THEN 'task.finished' WHEN 2 THEN 'task.cancelled'
        ELSE 'task.failed' END;
      -- The account's endpoints that asked for it (a disabled one's wait for it to be enabled),
      -- and the generation's own webhookUrl, whatever way it finished, on the one-off endpoint.
      INSERT INTO webhook_deliveries (id, account_id, endpoint_id, one_off_url, event_type, payload)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.account_id, e.id,
        CASE WHEN e.one_off THEN c.webhook_url END, hook_type,
        jsonb_build_object(
          'type', hook_type,
          'timestamp', to_char(event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', jsonb_build_object(
            'taskId', NEW.id, 'contentId', NEW.content_id, 'status', NEW.status,
            'finishCode', NEW.finish_code, 'finishMessage', NEW.finish_message,
            'kind', c.kind, 'modelId', c.model_id))
      FROM webhook_endpoints e JOIN contents c ON c.id = NEW.content_id
      WHERE e.account_id = NEW.account_id
        AND CASE WHEN e.one_off THEN c.webhook_url IS NOT NULL ELSE hook_type = ANY (e.events) END;
      RETURN NULL;
    END $fn$`.execute(db);
  // credits.low: a debit that takes a balance from at or above an endpoint's threshold to
  // below it, once per crossing, in the debit's own transaction.
  await sql`
    CREATE FUNCTION atelier_queue_credits_low() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_type, payload)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.account_id, e.id,
        'credits.low',
        jsonb_build_object(
          'type', 'credits.low',
          'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', jsonb_build_object('category', NEW.category, 'balance', NEW.amount,
            'threshold', e.credits_low_below))
      FROM webhook_endpoints e
      WHERE e.account_id = NEW.account_id AND 'credits.low' = ANY (e.events)
        AND OLD.amount >= e.credits_low_below AND NEW.amount < e.credits_low_below;
      RETURN NULL;
    END $fn$`.execute(db);
  await sql`
    CREATE TRIGGER credit_balances_low AFTER UPDATE OF amount ON credit_balances
    FOR EACH ROW WHEN (NEW.amount < OLD.amount) EXECUTE FUNCTION atelier_queue_credits_low()`.execute(
    db,
  );
}
