import { type Selectable, sql } from 'kysely';
import type { Queryable } from './database.ts';
import type {
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from './schema.ts';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

export async function insertEndpoint(
  q: Queryable,
  row: Pick<
    WebhookEndpointRow,
    'id' | 'account_id' | 'url' | 'description' | 'events' | 'secret' | 'credits_low_below'
  > &
    Partial<Pick<WebhookEndpointRow, 'one_off'>>,
): Promise<WebhookEndpointRow> {
  return q.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function listEndpoints(
  q: Queryable,
  accountId: string,
): Promise<WebhookEndpointRow[]> {
  return q
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('one_off', '=', false)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The account's one-off endpoint (the secret of generations' own webhookUrls), if made. */
export async function findOneOffEndpoint(
  q: Queryable,
  accountId: string,
): Promise<WebhookEndpointRow | undefined> {
  return q
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('one_off', '=', true)
    .executeTakeFirst();
}

export async function findEndpoint(
  q: Queryable,
  accountId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return q
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** Changes an endpoint of the account; undefined when it has none with that ID. */
export async function updateEndpoint(
  q: Queryable,
  accountId: string,
  id: string,
  patch: Partial<
    Pick<
      WebhookEndpointRow,
      | 'url'
      | 'description'
      | 'events'
      | 'enabled'
      | 'disabled_at'
      | 'disabled_reason'
      | 'secret'
      | 'previous_secret'
      | 'previous_secret_until'
      | 'credits_low_below'
    >
  >,
): Promise<WebhookEndpointRow | undefined> {
  return q
    .updateTable('webhook_endpoints')
    .set(patch)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(
  q: Queryable,
  accountId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return q
    .deleteFrom('webhook_endpoints')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returningAll()
    .executeTakeFirst();
}

/** A delivery due now, with what sending it needs. */
export interface DueDelivery extends WebhookDeliveryRow {
  /** The endpoint's URL, or the generation's own. */
  url: string;
  one_off: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  /** The W3C trace context of the generation a task's event is about (0019), if it has one. */
  trace_context: Record<string, string> | null;
}

/**
 * Takes up to `limit` deliveries due at `now` for `leaseMs`, counting the attempt: a worker that
 * dies while sending leaves a lease that runs out, and another worker sends the same message
 * again (at least once). Deliveries of a disabled endpoint wait until it is enabled again.
 */
export async function claimDeliveries(
  q: Queryable,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<DueDelivery[]> {
  const until = new Date(now.getTime() + leaseMs);
  const { rows } = await sql<DueDelivery>`
    WITH due AS (
      SELECT d.id FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
      -- A first attempt is due at once: the outbox trigger stamps it with the database's
      -- clock, retries and replays with the caller's.
      WHERE d.state = 'pending' AND (d.attempts = 0 OR d.next_attempt_at <= ${now})
        AND (d.lease_until IS NULL OR d.lease_until <= ${now})
      ORDER BY d.next_attempt_at
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d SET lease_until = ${until}, attempts = d.attempts + 1
      FROM due WHERE d.id = due.id
      RETURNING d.*
    )
    SELECT claimed.*, coalesce(claimed.one_off_url, e.url) AS url, e.one_off, e.secret,
      e.previous_secret, e.previous_secret_until, t.trace_context
    FROM claimed JOIN webhook_endpoints e ON e.id = claimed.endpoint_id
    -- A task's event joins the trace of its generation (the receiver's traceparent says so).
    LEFT JOIN tasks t ON t.id = claimed.payload -> 'data' ->> 'taskId'`.execute(q);
  return rows;
}

export async function recordAttempt(
  q: Queryable,
  attempt: Omit<WebhookAttemptRow, 'id'>,
): Promise<void> {
  await q.insertInto('webhook_attempts').values(attempt).execute();
}

/**
 * Ends a claimed attempt: delivered, tried again at `retryAt`, or failed for good. Only while
 * the claim (`lease`) still holds: a replay meanwhile, or another worker after the lease ran
 * out, owns the delivery now. Returns whether it was settled.
 */
export async function settleDelivery(
  q: Queryable,
  id: string,
  lease: Date,
  outcome:
    | { state: 'delivered'; at: Date }
    | { state: 'pending'; retryAt: Date }
    | { state: 'failed' },
): Promise<boolean> {
  const result = await q
    .updateTable('webhook_deliveries')
    .set({
      state: outcome.state,
      lease_until: null,
      ...(outcome.state === 'delivered' ? { delivered_at: outcome.at } : {}),
      ...(outcome.state === 'pending' ? { next_attempt_at: outcome.retryAt } : {}),
    })
    .where('id', '=', id)
    .where('lease_until', '=', lease)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** An endpoint's deliveries, newest first, with their attempts. */
export async function listDeliveries(
  q: Queryable,
  accountId: string,
  endpointId: string,
  limit: number,
): Promise<{ delivery: WebhookDeliveryRow; attempts: WebhookAttemptRow[] }[]> {
  const deliveries = await q
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  if (deliveries.length === 0) return [];
  const attempts = await q
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      deliveries.map((d) => d.id),
    )
    .orderBy('id')
    .execute();
  return deliveries.map((delivery) => ({
    delivery,
    attempts: attempts.filter((a) => a.delivery_id === delivery.id),
  }));
}

/**
 * Sends deliveries of the account again from `now`, as new attempts of the same messages (the
 * same `webhook-id`): one by ID, or every one of an endpoint created at or after `since`.
 * Returns the IDs queued again.
 */
export async function replayDeliveries(
  q: Queryable,
  accountId: string,
  which: { deliveryId: string } | { endpointId: string; since: Date },
  now: Date,
): Promise<string[]> {
  let query = q
    .updateTable('webhook_deliveries')
    .set({ state: 'pending', next_attempt_at: now, lease_until: null })
    .where('account_id', '=', accountId);
  query =
    'deliveryId' in which
      ? query.where('id', '=', which.deliveryId)
      : query.where('endpoint_id', '=', which.endpointId).where('created_at', '>=', which.since);
  const rows = await query.returning('id').execute();
  return rows.map((r) => r.id);
}

/** Queues `payload` for every enabled endpoint of the account that asked for `type`. */
export async function queueEvent(
  q: Queryable,
  accountId: string,
  type: string,
  payload: unknown,
  ids: () => string,
): Promise<void> {
  const endpoints = await q
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('account_id', '=', accountId)
    .where('enabled', '=', true)
    .where(sql<boolean>`${type} = ANY (events)`)
    .execute();
  if (endpoints.length === 0) return;
  await q
    .insertInto('webhook_deliveries')
    .values(
      endpoints.map((e) => ({
        id: ids(),
        account_id: accountId,
        endpoint_id: e.id,
        event_type: type,
        payload: JSON.stringify(payload),
      })),
    )
    .execute();
}
