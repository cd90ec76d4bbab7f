import type { Actor } from '../domain/actor.ts';
import { auditActorOf } from '../domain/audit.ts';
import { mcpSpender, type SpendingLimits } from '../domain/spending-limits.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import { appendAudit } from '../store/audit.store.ts';
import type { Db } from '../store/database.ts';
import { listConnections, type McpConnectionRow, revokeConnection } from '../store/oauth.store.ts';
import { setSpendingLimits } from '../store/spending.store.ts';
import type { ManagementGuard } from './management-guard.ts';
import {
  type McpClientInstruction,
  type McpDeployment,
  mcpClientInstructions,
} from './mcp-client-instructions.ts';
import type { SpendingLimitService, SpendingLimitsView } from './spending-limit.service.ts';

/** A consent of the account for one MCP client (contract `McpConnection`). */
export interface McpConnectionView {
  clientId: string;
  clientName: string | null;
  clientUri: string | null;
  logoUri: string | null;
  scopes: string[];
  connectedAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** What the client may spend and on what, with what it has spent; null: no limits. */
  limits: SpendingLimitsView | null;
}

/**
 * The account's MCP connections (spec §4.1: listed and revoked through GraphQL), managed only
 * by a caller with the full management right ({@link ManagementGuard}).
 */
export class McpConnectionService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #instructions: readonly McpClientInstruction[];
  readonly #spending: SpendingLimitService;
  readonly #managers: ManagementGuard;

  constructor(deps: {
    db: Db;
    clock: Clock;
    deployment: McpDeployment;
    spending: SpendingLimitService;
    managers: ManagementGuard;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#spending = deps.spending;
    this.#managers = deps.managers;
    this.#instructions = mcpClientInstructions(deps.deployment);
  }

  async list(actor: Actor): Promise<McpConnectionView[]> {
    await this.#managers.require(actor);
    const [rows, limits] = await Promise.all([
      listConnections(this.#db, actor.accountId),
      this.#spending.views(actor.accountId),
    ]);
    return rows.map((row) => toView(row, limits));
  }

  /** Operator: an account's connections, with their limits. */
  async listOf(accountId: string): Promise<McpConnectionView[]> {
    const [rows, limits] = await Promise.all([
      listConnections(this.#db, accountId),
      this.#spending.views(accountId),
    ]);
    return rows.map((row) => toView(row, limits));
  }

  /**
   * Replaces what a connected client may spend (`null`: no limits). They hold for every token
   * the client has and will get, until changed; revoking the connection removes them.
   */
  async setLimits(
    actor: Actor,
    clientId: string,
    limits: SpendingLimits | null,
  ): Promise<McpConnectionView> {
    await this.#managers.require(actor);
    const row = (await listConnections(this.#db, actor.accountId)).find(
      (c) => c.client_id === clientId && c.revoked_at === null,
    );
    if (row === undefined) throw notFound();
    await this.#spending.set(actor, mcpSpender(clientId), limits, 'limits');
    return toView(row, await this.#spending.views(actor.accountId));
  }

  /**
   * Removes the consent and, at once, the client's stored access tokens and unused codes: its
   * token fails on the next request, long before it would expire.
   */
  async revoke(actor: Actor, clientId: string): Promise<McpConnectionView> {
    await this.#managers.require(actor);
    const revoked = await this.#db.transaction().execute(async (trx) => {
      const row = await revokeConnection(trx, actor.accountId, clientId);
      if (row === undefined) return undefined;
      // A client connected again starts without the limits of the consent it lost.
      const now = this.#clock.now();
      await setSpendingLimits(trx, actor.accountId, mcpSpender(clientId), null, now);
      await appendAudit(trx, this.#clock.now(), auditActorOf(actor), {
        accountId: actor.accountId,
        action: 'mcp.revoked',
        target: clientId,
        detail: { clientName: row.client_name },
      });
      return row;
    });
    if (revoked === undefined) throw notFound();
    return toView(revoked, new Map());
  }

  /** Setup for the MCP clients people run, for this deployment (public: no actor). */
  instructions(): readonly McpClientInstruction[] {
    return this.#instructions;
  }
}

function notFound(): AppError {
  return new AppError(ErrorCode.NotFound, 'No such MCP connection.', { field: 'clientId' });
}

function toView(
  row: McpConnectionRow,
  limits: ReadonlyMap<string, SpendingLimitsView>,
): McpConnectionView {
  return {
    clientId: row.client_id,
    clientName: row.client_name,
    clientUri: row.client_uri,
    logoUri: row.logo_uri,
    scopes: row.scopes.split(' '),
    connectedAt: row.connected_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    limits: row.revoked_at === null ? (limits.get(mcpSpender(row.client_id)) ?? null) : null,
  };
}
