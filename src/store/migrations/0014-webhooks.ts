import { type Kysely, sql } from 'kysely';

/**
 * Webhook endpoints of accounts, and the outbox of deliveries (issue 21). A task's finish
 * event (task_events, 0013) queues a delivery for each enabled endpoint of its account that
 * asked for that kind of event, by trigger, in the transaction that finished the task: a
 * delivery can be late, never lost. Secrets are sealed with a server key (signing needs the
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
  await sql`
    CREATE FUNCTION atelier_queue_webhooks() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      hook_type text := CASE NEW.finish_code WHEN 0 THEN 'task.finished' WHEN 2 THEN 'task.cancelled'
        ELSE 'task.failed' END;
    BEGIN
      INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_type, payload)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.account_id, e.id, hook_type,
        jsonb_build_object(
          'type', hook_type,
          'timestamp', to_char(NEW.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', jsonb_build_object(
            'taskId', NEW.task_id, 'contentId', NEW.content_id, 'status', NEW.status,
            'finishCode', NEW.finish_code, 'finishMessage', NEW.finish_message,
            'kind', c.kind, 'modelId', c.model_id))
      FROM webhook_endpoints e JOIN contents c ON c.id = NEW.content_id
      -- A disabled endpoint's deliveries wait for it to be enabled again.
      WHERE e.account_id = NEW.account_id AND hook_type = ANY (e.events);
      -- The generation's own webhookUrl, whatever way it finished, signed with the one-off secret.
      INSERT INTO webhook_deliveries (id, account_id, endpoint_id, one_off_url, event_type, payload)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.account_id, e.id,
        c.webhook_url, hook_type,
        jsonb_build_object(
          'type', hook_type,
          'timestamp', to_char(NEW.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', jsonb_build_object(
            'taskId', NEW.task_id, 'contentId', NEW.content_id, 'status', NEW.status,
            'finishCode', NEW.finish_code, 'finishMessage', NEW.finish_message,
            'kind', c.kind, 'modelId', c.model_id))
      FROM contents c JOIN webhook_endpoints e ON e.account_id = c.account_id AND e.one_off
      WHERE c.id = NEW.content_id AND c.webhook_url IS NOT NULL;
      RETURN NULL;
    END $fn$`.execute(db);
  await sql`
    CREATE TRIGGER task_events_webhooks AFTER INSERT ON task_events
    FOR EACH ROW WHEN (NEW.status = 'finished') EXECUTE FUNCTION atelier_queue_webhooks()`.execute(
    db,
  );
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
