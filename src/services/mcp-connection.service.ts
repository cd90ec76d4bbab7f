import type { Actor } from '../domain/actor.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import type { Db } from '../store/database.ts';
import { listConnections, type McpConnectionRow, revokeConnection } from '../store/oauth.store.ts';
import {
  type McpClientInstruction,
  type McpDeployment,
  mcpClientInstructions,
} from './mcp-client-instructions.ts';

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
}

/** The account's MCP connections (spec §4.1: listed and revoked through GraphQL). */
export class McpConnectionService {
  readonly #db: Db;
  readonly #instructions: readonly McpClientInstruction[];

  constructor(deps: { db: Db; deployment: McpDeployment }) {
    this.#db = deps.db;
    this.#instructions = mcpClientInstructions(deps.deployment);
  }

  async list(actor: Actor): Promise<McpConnectionView[]> {
    return (await listConnections(this.#db, actor.accountId)).map(toView);
  }

  /**
   * Removes the consent and, at once, the client's stored access tokens and unused codes: its
   * token fails on the next request, long before it would expire.
   */
  async revoke(actor: Actor, clientId: string): Promise<McpConnectionView> {
    const revoked = await revokeConnection(this.#db, actor.accountId, clientId);
    if (revoked === undefined)
      throw new AppError(ErrorCode.NotFound, 'No such MCP connection.', { field: 'clientId' });
    return toView(revoked);
  }

  /** Setup for the MCP clients people run, for this deployment (public: no actor). */
  instructions(): readonly McpClientInstruction[] {
    return this.#instructions;
  }
}

function toView(row: McpConnectionRow): McpConnectionView {
  return {
    clientId: row.client_id,
    clientName: row.client_name,
    clientUri: row.client_uri,
    logoUri: row.logo_uri,
    scopes: row.scopes.split(' '),
    connectedAt: row.connected_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}
