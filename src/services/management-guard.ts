import type { Actor } from '../domain/actor.ts';
import { type ManagementRight, managementRight } from '../domain/management.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import type { Queryable } from '../store/database.ts';
import { listSpendingLimits } from '../store/spending.store.ts';

/**
 * Who may manage the account's keys, limits, webhooks and connections ({@link
 * managementRight}). Whether a key is limited is read at the moment it asks, not cached, so a
 * limit set a moment ago on another node holds at once; management calls are rare.
 */
export class ManagementGuard {
  readonly #db: Queryable;

  constructor(deps: { db: Queryable }) {
    this.#db = deps.db;
  }

  async right(actor: Actor): Promise<ManagementRight> {
    const { credential } = actor;
    if (credential.kind !== 'api_key') return managementRight(credential, false);
    const limits = await listSpendingLimits(this.#db, actor.accountId, credential.apiKeyId);
    return managementRight(credential, limits.length > 0);
  }

  /** Throws 110202 unless the caller may manage the account fully. */
  async require(actor: Actor): Promise<void> {
    const right = await this.right(actor);
    if (right !== 'full') throw refusal(right);
  }
}

/** The 110202 of a caller without the full right, saying who has it. */
export function refusal(right: ManagementRight): AppError {
  const who =
    right === 'self'
      ? 'This API key has spending limits: it may read its own entry and revoke itself, nothing more.'
      : 'An MCP connection manages nothing.';
  return new AppError(
    ErrorCode.Forbidden,
    `${who} API keys, spending limits, webhooks and MCP connections are managed by the account's owner, signed in or with an API key without limits.`,
    { reason: 'management_right' },
  );
}
