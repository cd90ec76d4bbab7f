import { generateApiKey } from '../auth/api-key.ts';
import type { Actor } from '../domain/actor.ts';
import { type AuditActor, auditActorOf, commandLine } from '../domain/audit.ts';
import type { SpendingLimits } from '../domain/spending-limits.ts';
import type { CredentialEvents } from '../events/credential-events.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, type FieldProblem, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { findAccount } from '../store/account.store.ts';
import {
  type ApiKeyMetadataRow,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from '../store/api-key.store.ts';
import { appendAudit } from '../store/audit.store.ts';
import type { Db, Queryable } from '../store/database.ts';
import { type ManagementGuard, refusal } from './management-guard.ts';
import type { SpendingLimitService, SpendingLimitsView } from './spending-limit.service.ts';

/** Metadata of a key: what listings show. Never the secret, never its hash. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** What the key may spend and on what, with what it has spent; null: the account's rules. */
  limits: SpendingLimitsView | null;
}

export interface CreatedApiKey {
  apiKey: ApiKeyInfo;
  /** The full key, returned this once. */
  secret: string;
}

export interface CreateApiKeyInput {
  name: string;
  expiresAt?: Date | null | undefined;
  limits?: SpendingLimits | null | undefined;
}

/**
 * API keys of an account: created with the secret shown once, listed as metadata, revoked.
 * Only a caller with the full management right creates keys or sets limits; a limited key
 * sees its own entry and may revoke itself ({@link ManagementGuard}).
 */
export class ApiKeyService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #changes: Pick<CredentialEvents, 'publish'>;
  readonly #spending: SpendingLimitService;
  readonly #managers: ManagementGuard;

  constructor(deps: {
    db: Db;
    clock: Clock;
    changes: Pick<CredentialEvents, 'publish'>;
    spending: SpendingLimitService;
    managers: ManagementGuard;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#changes = deps.changes;
    this.#spending = deps.spending;
    this.#managers = deps.managers;
  }

  /** A key of the caller's account; with limits, the key and its limits are made together. */
  async create(actor: Actor, input: CreateApiKeyInput): Promise<CreatedApiKey> {
    await this.#managers.require(actor);
    const limits = input.limits ?? null;
    if (limits === null) return this.issue(actor.accountId, input, auditActorOf(actor));
    return this.#db.transaction().execute(async (trx) => {
      const created = await this.issue(actor.accountId, input, auditActorOf(actor), trx);
      await this.#spending.set(actor, created.apiKey.id, limits, 'input.limits', trx);
      const views = await this.#spending.views(actor.accountId, trx);
      return { ...created, apiKey: { ...created.apiKey, limits: views.get(created.apiKey.id)! } };
    });
  }

  /**
   * Issues a key for an account (the caller's own, or an operator's choice), recorded in the
   * audit log in the same transaction.
   */
  async issue(
    accountId: string,
    input: CreateApiKeyInput,
    by: AuditActor = commandLine,
    q?: Queryable,
  ): Promise<CreatedApiKey> {
    if (q === undefined) {
      return this.#db.transaction().execute((trx) => this.issue(accountId, input, by, trx));
    }
    const name = input.name.trim();
    const problems = inputProblems(name, input.expiresAt ?? null, this.#clock.now());
    if (problems.length > 0) throw invalidInput(problems);
    const account = await findAccount(q, accountId);
    if (account === undefined) throw new AppError(ErrorCode.NotFound, 'No such account.');
    if (!account.api_key_access) {
      throw new AppError(ErrorCode.Forbidden, 'API-key access is not enabled for this account.');
    }
    const key = generateApiKey();
    const row = await insertApiKey(q, {
      id: newId('key'),
      accountId,
      name,
      prefix: key.prefix,
      secretHash: key.secretHash,
      expiresAt: input.expiresAt ?? null,
    });
    await appendAudit(q, this.#clock.now(), by, {
      accountId,
      action: 'api_key.created',
      target: row.id,
      detail: { name: row.name, prefix: row.prefix, expiresAt: row.expires_at },
    });
    return { apiKey: toInfo(row, null), secret: key.secret };
  }

  /** Operator: every key of an account (metadata only, as any listing). */
  async listOf(accountId: string): Promise<ApiKeyInfo[]> {
    if ((await findAccount(this.#db, accountId)) === undefined) {
      throw new AppError(ErrorCode.NotFound, 'No such account.');
    }
    return this.#infos(accountId);
  }

  /** The account's keys; for a limited key, only its own entry. */
  async list(actor: Actor): Promise<ApiKeyInfo[]> {
    const right = await this.#managers.right(actor);
    if (right === 'none') throw refusal(right);
    const own = ownKeyId(actor);
    return (await this.#infos(actor.accountId)).filter((key) => right === 'full' || key.id === own);
  }

  async #infos(accountId: string): Promise<ApiKeyInfo[]> {
    const [rows, limits] = await Promise.all([
      listApiKeys(this.#db, accountId),
      this.#spending.views(accountId),
    ]);
    return rows.map((row) => toInfo(row, limits.get(row.id) ?? null));
  }

  /** Replaces the limits of one of the caller's keys (`null`: none). */
  async setLimits(
    actor: Actor,
    apiKeyId: string,
    limits: SpendingLimits | null,
  ): Promise<ApiKeyInfo> {
    await this.#managers.require(actor);
    const key = (await listApiKeys(this.#db, actor.accountId)).find((k) => k.id === apiKeyId);
    if (key === undefined) throw new AppError(ErrorCode.NotFound, 'No such API key.');
    await this.#spending.set(actor, apiKeyId, limits, 'limits');
    return toInfo(key, (await this.#spending.views(actor.accountId)).get(apiKeyId) ?? null);
  }

  /** Revokes one of the caller's keys; it stops working on the very next request, on every node. */
  async revoke(actor: Actor, apiKeyId: string): Promise<ApiKeyInfo> {
    const right = await this.#managers.right(actor);
    if (right !== 'full' && !(right === 'self' && apiKeyId === ownKeyId(actor))) {
      throw refusal(right);
    }
    return this.revokeOf(actor.accountId, apiKeyId, auditActorOf(actor));
  }

  /**
   * Revokes a key of the account (an operator's act: a leaked key, say), recorded by `by`.
   * A key of another account is "not found".
   */
  async revokeOf(
    accountId: string,
    apiKeyId: string,
    by: AuditActor = commandLine,
  ): Promise<ApiKeyInfo> {
    const row = await this.#db.transaction().execute(async (trx) => {
      const revoked = await revokeApiKey(trx, accountId, apiKeyId, this.#clock.now());
      if (revoked !== undefined) {
        await appendAudit(trx, this.#clock.now(), by, {
          accountId,
          action: 'api_key.revoked',
          target: revoked.id,
          detail: { name: revoked.name, prefix: revoked.prefix },
        });
      }
      return revoked;
    });
    // Another account's key is "not found": its existence is not the caller's business.
    if (row === undefined) throw new AppError(ErrorCode.NotFound, 'No such API key.');
    await this.#changes.publish({ type: 'api_key_revoked', apiKeyId: row.id });
    return toInfo(row, (await this.#spending.views(accountId)).get(row.id) ?? null);
  }
}

const maxNameLength = 100;

/** The key the caller is using, if it is one. */
function ownKeyId(actor: Actor): string | null {
  return actor.credential.kind === 'api_key' ? actor.credential.apiKeyId : null;
}

function inputProblems(name: string, expiresAt: Date | null, now: Date): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (name.length === 0 || name.length > maxNameLength) {
    problems.push({ field: 'name', message: `must be 1 to ${maxNameLength} characters` });
  }
  if (expiresAt !== null && expiresAt.getTime() <= now.getTime()) {
    problems.push({ field: 'expiresAt', message: 'must be in the future' });
  }
  return problems;
}

function toInfo(row: ApiKeyMetadataRow, limits: SpendingLimitsView | null): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    limits,
  };
}
