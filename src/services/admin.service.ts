import type { AccountStatus, Actor } from '../domain/actor.ts';
import { auditActorOf } from '../domain/audit.ts';
import type { ModelStatus } from '../domain/model.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import {
  type Cursors,
  type Page,
  pageSize,
  timeIdPageInfo,
  timeIdPosition,
} from '../shared/pagination.ts';
import type { Db } from '../store/database.ts';
import { setModelStatus } from '../store/model-status.store.ts';
import {
  accountEmails,
  listOperatorTasks,
  type OperatorTaskFilter,
  type OperatorTaskRow,
  searchAccounts,
} from '../store/operator.store.ts';
import { queueHistory } from '../store/queue-history.store.ts';
import type { AccountService, CreditBalance, GrantInput, UserProfile } from './account.service.ts';
import type { ApiKeyInfo, ApiKeyService } from './api-key.service.ts';
import { audited } from './audited.ts';
import type { CatalogueService } from './catalogue.service.ts';
import type { ManagementGuard } from './management-guard.ts';
import type { McpConnectionService, McpConnectionView } from './mcp-connection.service.ts';
import type { WebhookEndpointView, WebhookService } from './webhook.service.ts';

/** A task as an operator sees it: with the failure detail the account sees only as a class. */
export interface OperatorTaskView {
  taskId: string;
  contentId: string;
  accountId: string;
  accountAlias: string;
  modelId: string;
  kind: string;
  status: OperatorTaskRow['status'];
  finishCode: number | null;
  finishMessage: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  attempts: number;
  creditsCharged: number;
  creditsRefunded: number;
  /** The backend of its last run (`<model>/<name>`), for a model with a pool. */
  backend: string | null;
  /** Its last run that did not succeed on a backend, if any. */
  failure: {
    backend: string;
    outcome: string;
    providerStatus: number | null;
    detail: string | null;
  } | null;
}

/** The queue at one instant, and the submissions until the next (`queueHistory`). */
export interface QueuePoint {
  at: Date;
  queued: number;
  running: number;
  submitted: number;
  meanWaitSeconds: number | null;
}

export interface QueueHistoryInput {
  from: Date;
  to: Date;
  /** How many instants, `from` the first, evenly apart until `to` (2 to 500). */
  points: number;
  modelId?: string | null | undefined;
}

const longestHistoryMs = 31 * 86_400_000; // 31 days

export interface AccountSearchInput {
  text?: string | null | undefined;
  status?: AccountStatus | null | undefined;
}

const statuses: readonly AccountStatus[] = ['active', 'suspended', 'deleted'];

export interface AdminServiceDeps {
  db: Db;
  clock: Clock;
  cursors: Cursors;
  managers: ManagementGuard;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  mcpConnections: McpConnectionService;
  webhooks: WebhookService;
  catalogue: Pick<CatalogueService, 'has'>;
  /** Models' runtime statuses: read again here, announced to every other node. */
  modelStatuses: { refresh(): Promise<void>; announce(): Promise<void> };
}

/**
 * The operator's side of the API (issue 32 §1): accounts found and read across the service,
 * credits granted and taken back, accounts suspended, tasks of everyone with their failures.
 * Only an admin account with the full management right (not a limited key) gets past
 * {@link AdminService.require}; every change is in the audit log under the admin's credential.
 */
export class AdminService {
  readonly #d: AdminServiceDeps;
  readonly #checked = new WeakMap<Actor, Promise<void>>();

  constructor(deps: AdminServiceDeps) {
    this.#d = deps;
  }

  /**
   * Throws 110202 unless the caller is an admin with the full management right. Checked once
   * per actor (a request's): a page of accounts asks it for every field of every account.
   */
  require(actor: Actor): Promise<void> {
    let checked = this.#checked.get(actor);
    if (checked === undefined) {
      checked =
        actor.role === 'admin'
          ? this.#d.managers.require(actor)
          : Promise.reject(new AppError(ErrorCode.Forbidden, 'This is for admin accounts.'));
      this.#checked.set(actor, checked);
    }
    return checked;
  }

  async accounts(
    actor: Actor,
    search: AccountSearchInput,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<Page<UserProfile>> {
    await this.require(actor);
    const size = pageSize(first, 50);
    if (search.status != null && !statuses.includes(search.status)) {
      throw invalidInput([{ field: 'status', message: `must be one of ${statuses.join(', ')}` }]);
    }
    const cursors = this.#d.cursors.for(actor.accountId, 'admin-accounts');
    const afterAlias =
      after == null
        ? undefined
        : cursors.decode(
            after,
            (v): v is { a: string } => typeof (v as { a?: unknown })?.a === 'string',
          ).a;
    const rows = await searchAccounts(this.#d.db, {
      text: search.text ?? undefined,
      status: search.status ?? undefined,
      afterAlias,
      limit: size + 1,
    });
    const page = rows.slice(0, size);
    const last = page.at(-1);
    return {
      nodes: await this.#d.accounts.profiles(page.map((row) => row.id)),
      pageInfo: {
        hasNextPage: rows.length > size,
        endCursor: last === undefined ? null : cursors.encode({ a: last.alias }),
      },
    };
  }

  async account(actor: Actor, accountId: string): Promise<UserProfile | null> {
    await this.require(actor);
    return (await this.#d.accounts.profiles([accountId]))[0] ?? null;
  }

  async emails(actor: Actor, accountId: string): Promise<string[]> {
    await this.require(actor);
    return accountEmails(this.#d.db, accountId);
  }

  async apiKeys(actor: Actor, accountId: string): Promise<ApiKeyInfo[]> {
    await this.require(actor);
    return this.#d.apiKeys.listOf(accountId);
  }

  async mcpConnections(actor: Actor, accountId: string): Promise<McpConnectionView[]> {
    await this.require(actor);
    return this.#d.mcpConnections.listOf(accountId);
  }

  async webhookEndpoints(actor: Actor, accountId: string): Promise<WebhookEndpointView[]> {
    await this.require(actor);
    return this.#d.webhooks.listOf(accountId);
  }

  /** Revokes a key of an account (leaked, say): it stops on its next request, on every node. */
  async revokeApiKey(actor: Actor, accountId: string, apiKeyId: string): Promise<ApiKeyInfo> {
    await this.require(actor);
    return this.#d.apiKeys.revokeOf(accountId, apiKeyId, auditActorOf(actor));
  }

  async grant(actor: Actor, input: GrantInput): Promise<CreditBalance> {
    await this.require(actor);
    return this.#d.accounts.grant(input, auditActorOf(actor));
  }

  async deduct(actor: Actor, input: GrantInput): Promise<CreditBalance> {
    await this.require(actor);
    return this.#d.accounts.deduct(input, auditActorOf(actor));
  }

  /** Suspends or reactivates an account (deletion stays a command-line act). */
  async setStatus(
    actor: Actor,
    accountId: string,
    status: 'active' | 'suspended',
  ): Promise<UserProfile> {
    await this.require(actor);
    if (status !== 'active' && status !== 'suspended') {
      throw invalidInput([{ field: 'status', message: 'must be active or suspended' }]);
    }
    if (accountId === actor.accountId && status === 'suspended') {
      throw invalidInput([{ field: 'accountId', message: 'an admin cannot suspend itself' }]);
    }
    const [current] = await this.#d.accounts.profiles([accountId]);
    if (current?.status === 'deleted') {
      // Deletion is a command-line act, and so is undoing it.
      throw invalidInput([
        { field: 'accountId', message: 'the account is deleted; only the command line changes it' },
      ]);
    }
    return this.#d.accounts.update(accountId, { status }, auditActorOf(actor));
  }

  /**
   * Sets a model's status over the configuration's (`maintenance`, `deprecated`, `ready`), on
   * every node, or (`null`) gives it back to the configuration. Submissions follow at once.
   */
  async setModelStatus(actor: Actor, modelId: string, status: ModelStatus | null): Promise<void> {
    await this.require(actor);
    if (!this.#d.catalogue.has(modelId)) {
      throw new AppError(ErrorCode.NotFound, `No model "${modelId}".`, { field: 'modelId' });
    }
    await audited(
      this.#d,
      auditActorOf(actor),
      (q) => setModelStatus(q, modelId, status, this.#d.clock.now()),
      (before) => ({
        accountId: null,
        action: 'model.status_changed',
        target: modelId,
        detail: { from: before, to: status },
      }),
    );
    await this.#d.modelStatuses.refresh();
    await this.#d.modelStatuses.announce();
  }

  /**
   * The queue's depth (queued, running) at `points` instants and the wait of what was
   * submitted between them, read back from the tasks' own times: the chart of a queue over
   * time without a sampler.
   */
  async queueHistory(actor: Actor, input: QueueHistoryInput): Promise<QueuePoint[]> {
    await this.require(actor);
    const problems = [];
    const spanMs = input.to.getTime() - input.from.getTime();
    if (!(spanMs > 0)) problems.push({ field: 'to', message: 'must be after from' });
    else if (spanMs > longestHistoryMs)
      problems.push({ field: 'to', message: 'at most 31 days after from' });
    if (!Number.isInteger(input.points) || input.points < 2 || input.points > 500) {
      problems.push({ field: 'points', message: 'must be a whole number from 2 to 500' });
    }
    if (problems.length > 0) throw invalidInput(problems);
    const rows = await queueHistory(
      this.#d.db,
      input.from,
      spanMs / (input.points - 1),
      input.points,
      input.modelId ?? null,
    );
    return rows.map((r) => ({
      at: r.at,
      queued: r.queued,
      running: r.running,
      submitted: r.submitted,
      meanWaitSeconds: r.mean_wait_seconds,
    }));
  }

  /** Tasks of every account (or one), newest first. */
  async tasks(
    actor: Actor,
    filter: OperatorTaskFilter,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<Page<OperatorTaskView>> {
    await this.require(actor);
    const size = pageSize(first, 50);
    if (filter.since !== undefined && filter.until !== undefined && filter.until <= filter.since) {
      throw invalidInput([{ field: 'until', message: 'must be after since' }]);
    }
    const cursors = this.#d.cursors.for(actor.accountId, 'admin-tasks');
    const rows = await listOperatorTasks(
      this.#d.db,
      filter,
      timeIdPosition(cursors, after) ?? undefined,
      size + 1,
    );
    return {
      nodes: rows.slice(0, size).map(viewOf),
      pageInfo: timeIdPageInfo(rows, size, cursors, (r) => ({ createdAt: r.created_at, id: r.id })),
    };
  }
}

function viewOf(row: OperatorTaskRow): OperatorTaskView {
  return {
    taskId: row.id,
    contentId: row.content_id,
    accountId: row.account_id,
    accountAlias: row.account_alias,
    modelId: row.model_id,
    kind: row.kind,
    status: row.status,
    finishCode: row.finish_code,
    finishMessage: row.finish_message,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    attempts: row.attempts,
    creditsCharged: row.credits_charged,
    creditsRefunded: row.credits_refunded,
    backend: row.backend,
    failure:
      row.failure_backend === null
        ? null
        : {
            backend: row.failure_backend,
            outcome: row.failure_outcome ?? 'failed',
            providerStatus: row.failure_status,
            detail: row.failure_detail,
          },
  };
}
