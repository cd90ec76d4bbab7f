import type { Actor } from '../domain/actor.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import type { Db } from '../store/database.ts';
import { listConnections, type McpConnectionRow, revokeConnection } from '../store/oauth.store.ts';

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

/** How to connect a given MCP client (contract `McpClientInstruction`). */
export interface McpClientInstruction {
  clientName: string;
  serverUrl: string;
  instructions: string;
  configSnippet: string | null;
  docsUrl: string | null;
}

/** The account's MCP connections (spec §4.1: listed and revoked through GraphQL). */
export class McpConnectionService {
  readonly #db: Db;
  readonly #serverUrl: string;

  constructor(deps: { db: Db; serverUrl: string }) {
    this.#db = deps.db;
    this.#serverUrl = deps.serverUrl;
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

  /** Setup for the common MCP clients, with this server's URL filled in. */
  instructions(): McpClientInstruction[] {
    const url = this.#serverUrl;
    const json = (value: unknown) => JSON.stringify(value, null, 2);
    return [
      {
        clientName: 'Claude Desktop',
        serverUrl: url,
        instructions: `1. Open **Settings → Connectors → Add custom connector**.\n2. Name it Atelier and paste \`${url}\`.\n3. Sign in and allow access in the browser window that opens.`,
        configSnippet: null,
        docsUrl: 'https://modelcontextprotocol.io/docs/develop/connect-remote-servers',
      },
      {
        clientName: 'Claude Code',
        serverUrl: url,
        instructions: `Run the command below, then \`/mcp\` in Claude Code and choose **Authenticate** for atelier.`,
        configSnippet: `claude mcp add --transport http atelier ${url}`,
        docsUrl: 'https://docs.claude.com/en/docs/claude-code/mcp',
      },
      {
        clientName: 'ChatGPT',
        serverUrl: url,
        instructions: `1. In **Settings → Apps & Connectors → Advanced**, turn on developer mode.\n2. **Create** a connector with the URL \`${url}\` and OAuth authentication.\n3. Sign in and allow access when asked.`,
        configSnippet: null,
        docsUrl: 'https://platform.openai.com/docs/guides/developer-mode',
      },
      {
        clientName: 'Cursor',
        serverUrl: url,
        instructions:
          'Add the snippet to `~/.cursor/mcp.json` (or `.cursor/mcp.json` in a project), then sign in when Cursor asks.',
        configSnippet: json({ mcpServers: { atelier: { url } } }),
        docsUrl: 'https://docs.cursor.com/context/model-context-protocol',
      },
      {
        clientName: 'VS Code',
        serverUrl: url,
        instructions:
          'Add the snippet to `.vscode/mcp.json` (or run **MCP: Add Server** and choose HTTP), then start the server and sign in.',
        configSnippet: json({ servers: { atelier: { type: 'http', url } } }),
        docsUrl: 'https://code.visualstudio.com/docs/copilot/customization/mcp-servers',
      },
      {
        clientName: 'MCP Inspector',
        serverUrl: url,
        instructions: `Run the command, choose **Streamable HTTP**, enter \`${url}\`, and in **Authentication** use the client ID \`atelier-local-tools\`; then **Connect**.`,
        configSnippet: 'npx @modelcontextprotocol/inspector',
        docsUrl: 'https://modelcontextprotocol.io/docs/tools/inspector',
      },
    ];
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
