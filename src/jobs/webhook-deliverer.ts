import { nextAttemptAt, secretAad, signWebhook } from '../domain/webhooks.ts';
import { contextFrom, tracedCall, withContext } from '../observability/tracing.ts';
import type { Clock } from '../shared/clock.ts';
import { newId } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import { type AddressCheckOptions, loggedReason } from '../shared/public-fetch.ts';
import { isLoopbackUrl, type PostAnswer, postPublic } from '../shared/public-post.ts';
import type { SecretBox } from '../shared/secret-box.ts';
import type { Db } from '../store/database.ts';
import {
  claimDeliveries,
  type DueDelivery,
  queueEvent,
  recordAttempt,
  settleDelivery,
  updateEndpoint,
} from '../store/webhook.store.ts';

export interface WebhookDelivererOptions {
  db: Db;
  clock: Clock;
  box: SecretBox;
  log: Logger;
  timeoutMs: number;
  allowLocalhost: boolean;
  /** Deliveries sent at once by this process. */
  batch?: number;
  /** Tests only: DNS answers and dialled addresses behind the address check. */
  network?: AddressCheckOptions;
}

const excerptBytes = 1_024; // 1 KiB of each answer kept in the delivery log
const maxAnswerBytes = 64 * 1_024; // an answer is cut off past 64 KiB

/**
 * Sends due webhook deliveries from the outbox (issue 21), in worker processes. Each is claimed
 * under a lease longer than a send can take: a worker killed mid-delivery leaves it to another
 * once the lease runs out, so every message goes out at least once, always with the same
 * `webhook-id`. A 2xx answer delivers it; anything else is tried again on the backoff schedule
 * for about a day, after which the delivery has failed and its endpoint is disabled.
 */
export class WebhookDeliverer {
  readonly #o: Required<WebhookDelivererOptions>;

  constructor(options: WebhookDelivererOptions) {
    this.#o = { batch: 10, network: {}, ...options };
  }

  /** How long a claimed delivery is this worker's: two deadlines and a margin. */
  get leaseMs(): number {
    return this.#o.timeoutMs * 2 + 5_000;
  }

  /** Sends what is due now; returns how many were tried. */
  async deliverDue(signal?: AbortSignal): Promise<number> {
    const { db, clock, batch } = this.#o;
    const due = await claimDeliveries(db, clock.now(), this.leaseMs, batch);
    await Promise.all(due.map((delivery) => this.#send(delivery, signal)));
    return due.length;
  }

  async #send(delivery: DueDelivery, signal?: AbortSignal): Promise<void> {
    const { db, clock, log } = this.#o;
    const lease = delivery.lease_until!;
    const sentAt = clock.now();
    const body = JSON.stringify(delivery.payload);
    const timestamp = Math.floor(sentAt.getTime() / 1000);
    const started = performance.now();
    let answer: PostAnswer | undefined;
    let error: string | null = null;
    let logged: string | null = null;
    try {
      if (signal?.aborted) throw new Error('the worker is stopping');
      const url = new URL(delivery.url);
      const post = (trace: Record<string, string>) =>
        postPublic(url, {
          ...this.#o.network,
          headers: {
            ...trace,
            'content-type': 'application/json',
            'user-agent': 'Atelier-Webhooks/1',
            'webhook-id': delivery.id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signWebhook(
              this.#secrets(delivery, sentAt),
              delivery.id,
              timestamp,
              body,
            ),
          },
          body,
          timeoutMs: this.#o.timeoutMs,
          excerptBytes,
          maxBytes: maxAnswerBytes,
          loopback: this.#o.allowLocalhost && isLoopbackUrl(url),
        });
      // A client span per delivery, in the trace of the generation a task's event is about;
      // the receiver gets its `traceparent`.
      answer = await withContext(
        delivery.trace_context === null ? null : contextFrom(delivery.trace_context),
        () =>
          tracedCall(
            {
              name: 'atelier.webhook.deliver',
              method: 'POST',
              url: delivery.url,
              attributes: {
                'atelier.webhook.delivery_id': delivery.id,
                'atelier.webhook.endpoint_id': delivery.endpoint_id,
                'atelier.attempt': delivery.attempts,
              },
            },
            post,
          ),
      );
    } catch (e) {
      error = (e as Error).message; // the account's delivery log: one wording for no public address
      logged = loggedReason(e);
    }
    const latencyMs = Math.round(performance.now() - started);
    const status = answer?.status ?? null;
    await recordAttempt(db, {
      delivery_id: delivery.id,
      at: sentAt,
      status_code: status,
      latency_ms: latencyMs,
      error,
      response_excerpt: answer?.excerpt ?? null,
    });
    if (status !== null && status >= 200 && status < 300) {
      await settleDelivery(db, delivery.id, lease, { state: 'delivered', at: clock.now() });
      return;
    }
    const retryAt = nextAttemptAt(delivery.attempts, clock.now());
    const why = error ?? `HTTP ${status}`;
    log.info(
      { deliveryId: delivery.id, endpointId: delivery.endpoint_id, why: logged ?? why },
      'webhook delivery failed',
    );
    if (retryAt !== null) {
      await settleDelivery(db, delivery.id, lease, { state: 'pending', retryAt });
      return;
    }
    // A generation's own URL failing says nothing of the account's endpoints.
    if ((await settleDelivery(db, delivery.id, lease, { state: 'failed' })) && !delivery.one_off) {
      await this.#disable(delivery, why);
    }
  }

  /** The current secret, and the previous one while its grace period lasts. */
  #secrets(delivery: DueDelivery, at: Date): string[] {
    const { box } = this.#o;
    const aad = secretAad(delivery.endpoint_id);
    const secrets = [box.open(delivery.secret, aad)];
    if (
      delivery.previous_secret !== null &&
      (delivery.previous_secret_until?.getTime() ?? 0) > at.getTime()
    ) {
      secrets.push(box.open(delivery.previous_secret, aad));
    }
    return secrets;
  }

  /** An endpoint that failed a delivery for a day is disabled, and its account told. */
  async #disable(delivery: DueDelivery, why: string): Promise<void> {
    const { db, clock, log } = this.#o;
    const reason = `A delivery kept failing for a day (last: ${why}); fix the endpoint, then enable it again.`;
    const disabled = await updateEndpoint(db, delivery.account_id, delivery.endpoint_id, {
      enabled: false,
      disabled_at: clock.now(),
      disabled_reason: reason,
    });
    if (disabled === undefined) return;
    log.warn({ endpointId: disabled.id }, 'webhook endpoint disabled after a day of failures');
    await queueEvent(
      db,
      delivery.account_id,
      'webhook.disabled',
      {
        type: 'webhook.disabled',
        timestamp: clock.now().toISOString(),
        data: { endpointId: disabled.id, url: disabled.url, reason },
      },
      () => newId('msg'),
    );
  }
}
