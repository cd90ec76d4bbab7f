import type { Actor } from '../domain/actor.ts';
import { type AuditAction, type AuditEvent, auditActorOf } from '../domain/audit.ts';
import {
  endpointProblems,
  newWebhookSecret,
  rotationGraceMs,
  secretAad,
  type WebhookEventType,
} from '../domain/webhooks.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, type FieldProblem, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { isLoopbackUrl, postTargetProblem } from '../shared/public-post.ts';
import type { SecretBox } from '../shared/secret-box.ts';
import type { Db } from '../store/database.ts';
import {
  deleteEndpoint,
  findEndpoint,
  findOneOffEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  replayDeliveries,
  updateEndpoint,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from '../store/webhook.store.ts';
import { audited } from './audited.ts';
import type { ManagementGuard } from './management-guard.ts';

/** An endpoint as its account sees it: never its secret. */
export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  creditsLowBelow: number;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

export interface CreatedWebhookSecret {
  endpoint: WebhookEndpointView;
  /** `whsec_…`, shown this once. */
  secret: string;
}

export interface WebhookDeliveryView {
  id: string;
  eventType: string;
  payload: unknown;
  state: WebhookDeliveryRow['state'];
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date | null;
  attempts: {
    at: Date;
    statusCode: number | null;
    latencyMs: number;
    error: string | null;
    responseExcerpt: string | null;
  }[];
}

export interface WebhookEndpointInput {
  url?: string | undefined;
  events?: readonly string[] | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
  /** credits.low fires when a balance falls below this (default 100). */
  creditsLowBelow?: number | undefined;
}

export interface WebhookServiceDeps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  allowLocalhost: boolean;
  managers: ManagementGuard;
}

/**
 * An account's webhook endpoints (issue 21): created with a signing secret shown once, listed,
 * changed, disabled and enabled, deleted, their secret rotated with a grace period, and their
 * delivery log with replays. Only a caller with the full management right sees or changes
 * them ({@link ManagementGuard}).
 */
export class WebhookService {
  readonly #d: WebhookServiceDeps;

  constructor(deps: WebhookServiceDeps) {
    this.#d = deps;
  }

  async list(actor: Actor): Promise<WebhookEndpointView[]> {
    await this.#d.managers.require(actor);
    return (await listEndpoints(this.#d.db, actor.accountId)).map(toView);
  }

  /** Operator: an account's endpoints (never a secret). */
  async listOf(accountId: string): Promise<WebhookEndpointView[]> {
    return (await listEndpoints(this.#d.db, accountId)).map(toView);
  }

  async create(
    actor: Actor,
    input: Required<Pick<WebhookEndpointInput, 'url' | 'events'>> & WebhookEndpointInput,
  ): Promise<CreatedWebhookSecret> {
    await this.#d.managers.require(actor);
    this.#check(input);
    const id = newId('whe');
    const secret = newWebhookSecret();
    const row = await audited(
      this.#d,
      auditActorOf(actor),
      (q) =>
        insertEndpoint(q, {
          id,
          account_id: actor.accountId,
          url: input.url,
          description: input.description ?? '',
          events: [...new Set(input.events)],
          secret: this.#d.box.seal(secret, secretAad(id)),
          credits_low_below: input.creditsLowBelow ?? 100,
        }),
      (created) => endpointEvent('webhook.endpoint_created', created),
    );
    return { endpoint: toView(row), secret };
  }

  /** Changes an endpoint; `enabled: true` sends what waited while it was disabled. */
  async update(
    actor: Actor,
    id: string,
    input: WebhookEndpointInput,
  ): Promise<WebhookEndpointView> {
    await this.#d.managers.require(actor);
    this.#check(input);
    const oneOff = await findOneOffEndpoint(this.#d.db, actor.accountId);
    if (oneOff?.id === id && (input.url !== undefined || input.events !== undefined)) {
      throw invalidInput([
        { field: 'endpointId', message: 'the one-off endpoint has no URL or events of its own' },
      ]);
    }
    const changed = {
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.events === undefined ? {} : { events: [...new Set(input.events)] }),
      ...(input.creditsLowBelow === undefined ? {} : { credits_low_below: input.creditsLowBelow }),
      ...(input.enabled === undefined
        ? {}
        : input.enabled
          ? { enabled: true, disabled_at: null, disabled_reason: null }
          : {
              enabled: false,
              disabled_at: this.#d.clock.now(),
              disabled_reason: 'Disabled by the account.',
            }),
    };
    const row = await audited(
      this.#d,
      auditActorOf(actor),
      (q) => updateEndpoint(q, actor.accountId, id, changed),
      (updated) =>
        updated === undefined
          ? null
          : endpointEvent('webhook.endpoint_updated', updated, Object.keys(input).sort()),
    );
    if (row === undefined) throw notFound();
    return toView(row);
  }

  async delete(actor: Actor, id: string): Promise<WebhookEndpointView> {
    await this.#d.managers.require(actor);
    const row = await audited(
      this.#d,
      auditActorOf(actor),
      (q) => deleteEndpoint(q, actor.accountId, id),
      (deleted) =>
        deleted === undefined ? null : endpointEvent('webhook.endpoint_deleted', deleted),
    );
    if (row === undefined) throw notFound();
    return toView(row);
  }

  /**
   * A new secret, shown once; the old one keeps signing beside it for 24 hours, so receivers
   * can switch without losing a delivery.
   */
  async rotateSecret(actor: Actor, id: string): Promise<CreatedWebhookSecret> {
    await this.#d.managers.require(actor);
    const { db, box, clock } = this.#d;
    const current = await findEndpoint(db, actor.accountId, id);
    if (current === undefined) throw notFound();
    const secret = newWebhookSecret();
    const row = await audited(
      this.#d,
      auditActorOf(actor),
      (q) =>
        updateEndpoint(q, actor.accountId, id, {
          secret: box.seal(secret, secretAad(id)),
          previous_secret: current.secret,
          previous_secret_until: new Date(clock.now().getTime() + rotationGraceMs),
        }),
      (rotated) =>
        rotated === undefined ? null : endpointEvent('webhook.secret_rotated', rotated),
    );
    if (row === undefined) throw notFound();
    return { endpoint: toView(row), secret };
  }

  /**
   * The secret that signs the deliveries of generations naming their own `webhookUrl`: made on
   * the first call, rotated (with the same grace) on the next ones; shown once each time.
   */
  async rotateOneOffSecret(actor: Actor): Promise<CreatedWebhookSecret> {
    await this.#d.managers.require(actor);
    const existing = await findOneOffEndpoint(this.#d.db, actor.accountId);
    if (existing !== undefined) return this.rotateSecret(actor, existing.id);
    const id = newId('whe');
    const secret = newWebhookSecret();
    const row = await audited(
      this.#d,
      auditActorOf(actor),
      (q) =>
        insertEndpoint(q, {
          id,
          account_id: actor.accountId,
          url: '',
          description: 'Deliveries to the webhookUrl of generations',
          events: [],
          secret: this.#d.box.seal(secret, secretAad(id)),
          credits_low_below: 100,
          one_off: true,
        }),
      (created) => endpointEvent('webhook.secret_rotated', created),
    );
    return { endpoint: toView(row), secret };
  }

  /** The one-off endpoint, for its delivery log; null until its secret was made. */
  async oneOffEndpoint(actor: Actor): Promise<WebhookEndpointView | null> {
    await this.#d.managers.require(actor);
    const row = await findOneOffEndpoint(this.#d.db, actor.accountId);
    return row === undefined ? null : toView(row);
  }

  /**
   * Refuses (120001 on `webhookUrl`) a generation's own webhook URL that is not one deliveries
   * may go to, or when the account has no one-off secret to sign them with yet.
   */
  async checkOneOffUrl(actor: Actor, url: string): Promise<void> {
    const problems = this.#problems({ url });
    if (problems.length > 0) {
      throw invalidInput(problems.map((p) => ({ ...p, field: 'webhookUrl' })));
    }
    if ((await findOneOffEndpoint(this.#d.db, actor.accountId)) === undefined) {
      throw invalidInput([
        {
          field: 'webhookUrl',
          message:
            'make the secret these deliveries are signed with first: rotateOneOffWebhookSecret',
        },
      ]);
    }
  }

  /** The endpoint's newest deliveries with every attempt: status, latency, what it answered. */
  async deliveries(actor: Actor, endpointId: string, first = 20): Promise<WebhookDeliveryView[]> {
    await this.#d.managers.require(actor);
    if ((await findEndpoint(this.#d.db, actor.accountId, endpointId)) === undefined)
      throw notFound();
    const limit = Math.min(Math.max(first, 1), 100);
    return (await listDeliveries(this.#d.db, actor.accountId, endpointId, limit)).map(
      ({ delivery, attempts }) => toDeliveryView(delivery, attempts),
    );
  }

  /** Sends one delivery again (the same `webhook-id`), whatever became of it. */
  async replay(actor: Actor, deliveryId: string): Promise<number> {
    await this.#d.managers.require(actor);
    const ids = await replayDeliveries(
      this.#d.db,
      actor.accountId,
      { deliveryId },
      this.#d.clock.now(),
    );
    if (ids.length === 0)
      throw new AppError(ErrorCode.NotFound, 'No such webhook delivery.', { field: 'deliveryId' });
    return ids.length;
  }

  /** Sends again every delivery of the endpoint created at or after `since`; how many. */
  async replaySince(actor: Actor, endpointId: string, since: Date): Promise<number> {
    await this.#d.managers.require(actor);
    if ((await findEndpoint(this.#d.db, actor.accountId, endpointId)) === undefined)
      throw notFound();
    const ids = await replayDeliveries(
      this.#d.db,
      actor.accountId,
      { endpointId, since },
      this.#d.clock.now(),
    );
    return ids.length;
  }

  #check(input: WebhookEndpointInput): void {
    const problems = this.#problems(input);
    if (problems.length > 0) throw invalidInput(problems);
  }

  /** What is wrong with an endpoint as written, its URL checked against where we may post. */
  #problems(input: WebhookEndpointInput): FieldProblem[] {
    const problems = endpointProblems(input);
    if (problems.length === 0 && input.url !== undefined) {
      const url = new URL(input.url);
      const loopback = this.#d.allowLocalhost && isLoopbackUrl(url);
      const problem = postTargetProblem(url, loopback);
      if (problem !== null) problems.push({ field: 'url', message: problem });
    }
    return problems;
  }
}

/** An endpoint's audit entry: its URL and events, never its secret. */
function endpointEvent(
  action: AuditAction,
  row: WebhookEndpointRow,
  changed?: readonly string[],
): AuditEvent {
  return {
    accountId: row.account_id,
    action,
    target: row.id,
    detail: {
      url: row.url,
      events: row.events,
      enabled: row.enabled,
      ...(changed === undefined ? {} : { changed }),
    },
  };
}

function notFound(): AppError {
  return new AppError(ErrorCode.NotFound, 'No such webhook endpoint.', { field: 'endpointId' });
}

function toView(row: WebhookEndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as WebhookEventType[],
    enabled: row.enabled,
    creditsLowBelow: row.credits_low_below,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
  };
}

function toDeliveryView(
  delivery: WebhookDeliveryRow,
  attempts: WebhookAttemptRow[],
): WebhookDeliveryView {
  return {
    id: delivery.id,
    eventType: delivery.event_type,
    payload: delivery.payload,
    state: delivery.state,
    createdAt: delivery.created_at,
    deliveredAt: delivery.delivered_at,
    nextAttemptAt: delivery.state === 'pending' ? delivery.next_attempt_at : null,
    attempts: attempts.map((a) => ({
      at: a.at,
      statusCode: a.status_code,
      latencyMs: a.latency_ms,
      error: a.error,
      responseExcerpt: a.response_excerpt,
    })),
  };
}
