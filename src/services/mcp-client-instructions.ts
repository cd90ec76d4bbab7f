import { localToolsCallbackPaths, localToolsClientId } from '../auth/oauth/clients.ts';
import { anyPortCallbackHosts } from '../shared/loopback.ts';
import { isPublicHostname } from '../shared/public-address.ts';

/**
 * The `mcp-remote` release the instructions pin, so a desktop app runs the version that was
 * tested (test/integration/mcp/mcp-remote.test.ts; package.json pins the same one).
 */
export const mcpRemoteVersion = '0.15.1';

/**
 * The MCP Inspector release the instructions pin, so a person runs the CLI that was tested
 * (test/integration/mcp/mcp-inspector.test.ts; package.json pins the same one).
 */
export const inspectorVersion = '2.12.0';

/** What decides which clients can connect: the MCP URL and the metadata-document policy. */
export interface McpDeployment {
  /** `PUBLIC_URL/mcp`. */
  readonly serverUrl: string;
  /** `OAUTH_CIMD_HOSTS`: hosts whose Client ID Metadata Documents are accepted, `*`, or none. */
  readonly cimdHosts: readonly string[] | '*';
}

/** How to connect one MCP client to this deployment (contract `McpClientInstruction`). */
export interface McpClientInstruction {
  clientName: string;
  serverUrl: string;
  /** Whether the client connects to this deployment as it is configured now. */
  available: boolean;
  /** The client ID to configure when the client cannot send a metadata document. */
  clientId: string | null;
  /** Which callback (redirect URI) the client uses, and why Atelier accepts it. */
  callbackRule: string;
  instructions: string;
  configSnippet: string | null;
  docsUrl: string | null;
}

/** An entry before the server URL is added. */
type Entry = Omit<McpClientInstruction, 'serverUrl'>;

/** Setup for the clients people run, true for `deployment` (local http or public https). */
export function mcpClientInstructions(deployment: McpDeployment): McpClientInstruction[] {
  const clients = [claudeCode, vsCode, cursor, claudeDesktop, webAgents, inspector, anyClient];
  return clients.map((client) => ({ serverUrl: deployment.serverUrl, ...client(deployment) }));
}

/** Claude Code takes a client ID on the command line, and calls back on localhost. */
function claudeCode(deployment: McpDeployment): Entry {
  const url = deployment.serverUrl;
  return {
    clientName: 'Claude Code',
    available: true,
    clientId: localToolsClientId,
    callbackRule: `Claude Code listens on \`http://localhost:<free port>/callback\`; \`${localToolsClientId}\` accepts any port there.`,
    instructions: [
      '1. Run the command below in a terminal.',
      '2. In Claude Code, run `/mcp`, choose **atelier**, then **Authenticate**; sign in and allow access in the browser.',
      '',
      `\`--client-id\` makes Claude Code use Atelier's built-in client (Atelier has no dynamic registration). Without it Claude Code sends its Client ID Metadata Document from claude.ai, which ${accepts(deployment, 'claude.ai') ? 'this server accepts when it can reach claude.ai' : 'this server does not accept (`OAUTH_CIMD_HOSTS`)'}.`,
    ].join('\n'),
    configSnippet: `claude mcp add --transport http --client-id ${localToolsClientId} atelier ${url}`,
    docsUrl: 'https://docs.claude.com/en/docs/claude-code/mcp',
  };
}

/** VS Code sends its metadata document; a typed client ID would not fit its callback. */
function vsCode(deployment: McpDeployment): Entry {
  const url = deployment.serverUrl;
  return {
    clientName: 'VS Code',
    available: accepts(deployment, 'vscode.dev'),
    clientId: null,
    callbackRule:
      "VS Code's own, listed in its metadata document (`http://127.0.0.1:<port>/` and `https://vscode.dev/redirect`).",
    instructions: accepts(deployment, 'vscode.dev')
      ? [
          '1. Add the snippet to `.vscode/mcp.json` (or run **MCP: Add Server**, choose **HTTP** and paste the URL).',
          '2. Start the server; when VS Code asks to authenticate, allow it, then sign in and allow access in the browser.',
          '',
          'VS Code identifies itself with its Client ID Metadata Document, `https://vscode.dev/oauth/client-metadata.json`, which this server accepts (`OAUTH_CIMD_HOSTS`) and fetches: there is no client ID to type.',
        ].join('\n')
      : [
          'Not with this server as configured: VS Code identifies itself with its Client ID Metadata Document on vscode.dev, and `OAUTH_CIMD_HOSTS` does not allow that host.',
          `Ask the operator to add \`vscode.dev\` to \`OAUTH_CIMD_HOSTS\`. When this server takes no metadata documents at all (\`OAUTH_CIMD_HOSTS\` empty), VS Code asks for a client ID instead: \`${localToolsClientId}\` accepts its \`http://127.0.0.1:<port>/\` callback (not tried with VS Code itself).`,
        ].join('\n'),
    configSnippet: json({ servers: { atelier: { type: 'http', url } } }),
    docsUrl: 'https://code.visualstudio.com/docs/copilot/customization/mcp-servers',
  };
}

/** Cursor, through mcp-remote: the tested way (its own OAuth has not been tried). */
function cursor(deployment: McpDeployment): Entry {
  const url = deployment.serverUrl;
  return {
    clientName: 'Cursor',
    available: true,
    clientId: localToolsClientId,
    callbackRule: mcpRemoteCallbackRule,
    instructions: [
      '1. Add the snippet to `~/.cursor/mcp.json` (or `.cursor/mcp.json` in a project) and turn the server on in **Cursor Settings → MCP**.',
      '2. A browser window opens: sign in and allow access.',
      '',
      `Cursor starts \`mcp-remote\` (Node.js 18 or later), which signs in with Atelier's built-in client \`${localToolsClientId}\` and keeps the token in \`~/.mcp-auth\` until it expires (7 days). This is the way that is tested with Atelier; Cursor's own OAuth for a \`url\` entry has not been tried with it.`,
    ].join('\n'),
    configSnippet: mcpRemoteSnippet(url),
    docsUrl: 'https://cursor.com/docs/context/mcp',
  };
}

/** Claude Desktop starts local (stdio) servers only: mcp-remote bridges to this one. */
function claudeDesktop(deployment: McpDeployment): Entry {
  const url = deployment.serverUrl;
  return {
    clientName: 'Claude Desktop',
    available: true,
    clientId: localToolsClientId,
    callbackRule: mcpRemoteCallbackRule,
    instructions: [
      '1. Open **Settings → Developer → Edit Config** and add the snippet to `claude_desktop_config.json` (keep your other `mcpServers`).',
      '2. Restart Claude Desktop. A browser window opens: sign in and allow access.',
      '',
      `Claude Desktop starts local servers only; \`mcp-remote\` (Node.js 18 or later) connects it to this remote one, signs in with Atelier's built-in client \`${localToolsClientId}\` and keeps the token in \`~/.mcp-auth\` (\`MCP_REMOTE_CONFIG_DIR\`) until it expires (7 days, then it asks again).`,
    ].join('\n'),
    configSnippet: mcpRemoteSnippet(url),
    docsUrl: 'https://modelcontextprotocol.io/docs/develop/connect-local-servers',
  };
}

/** ChatGPT and the like connect from their own servers: a public https URL, and CIMD on. */
function webAgents(deployment: McpDeployment): Entry {
  const url = deployment.serverUrl;
  const { protocol, hostname } = new URL(url);
  // A private address or a local name (192.168.1.20, atelier.local) is out of their reach too.
  const publicHttps = protocol === 'https:' && isPublicHostname(hostname);
  const hosts = documentHosts(deployment);
  const steps = [
    '1. In ChatGPT, open **Settings → Apps & Connectors → Advanced settings** and turn on developer mode.',
    `2. **Create** a connector with the URL \`${url}\` and OAuth authentication.`,
    '3. Sign in and allow access when asked.',
    '',
    `A web-hosted agent identifies itself with a Client ID Metadata Document (an https URL as client ID); this server accepts documents ${hosts}, and the consent page shows the host. An agent whose web page calls \`/mcp\` itself also needs its origin in \`MCP_ALLOWED_ORIGINS\`.`,
  ];
  const missing = [
    publicHttps ? null : `\`${url}\` is not a public https address`,
    hosts === null ? '`OAUTH_CIMD_HOSTS` is empty' : null,
  ].filter((reason) => reason !== null);
  return {
    clientName: 'ChatGPT and other web-hosted agents',
    available: missing.length === 0,
    clientId: null,
    callbackRule: "The agent's own https callback, listed in its metadata document.",
    instructions:
      missing.length === 0
        ? steps.join('\n')
        : [
            `Not with this server as configured: ${missing.join(' and ')}.`,
            "A web-hosted agent connects from its own servers on the internet: set `PUBLIC_URL` to the public https address people reach (behind a TLS proxy or a tunnel), and let `OAUTH_CIMD_HOSTS` accept the agent's metadata-document host (`*` accepts any public host).",
          ].join('\n'),
    configSnippet: null,
    docsUrl: 'https://platform.openai.com/docs/guides/developer-mode',
  };
}

/** The MCP Inspector: its CLI from a terminal, or its web UI, with the built-in client ID. */
function inspector(deployment: McpDeployment): Entry {
  const url = deployment.serverUrl;
  const npx = `npx @modelcontextprotocol/inspector@${inspectorVersion}`;
  return {
    clientName: 'MCP Inspector',
    available: true,
    clientId: localToolsClientId,
    callbackRule: `The CLI (and TUI) waits on \`http://127.0.0.1:6276/oauth/callback\`; the web Inspector returns to its own address, \`http://127.0.0.1:6274/oauth/callback\` by default: \`${localToolsClientId}\` accepts both, on any port.`,
    instructions: [
      'The command opens the browser to sign in and allow, then prints the tools as JSON; add `--strict` to see its schema check in full. Later runs use the stored token until it expires (7 days): the Inspector keeps it in the OS keychain, else in `~/.mcp-inspector/secrets.json` (`MCP_INSPECTOR_SECRET_STORE` chooses). Without a terminal (a script, CI) the CLI starts a sign-in only with `MCP_AUTO_OPEN_ENABLED=true`, and prints the address to open on stderr.',
      '',
      `In the web Inspector (\`${npx}\`), add a **Streamable HTTP** server with the URL and \`${localToolsClientId}\` as the OAuth client ID, then **Connect**.`,
    ].join('\n'),
    configSnippet: `${npx} --cli ${url} --transport http --client-id ${localToolsClientId} --method tools/list`,
    docsUrl: 'https://modelcontextprotocol.io/docs/tools/inspector',
  };
}

/** What any client of the MCP authorization spec needs; the SDK test runs its snippet. */
function anyClient(deployment: McpDeployment): Entry {
  const url = deployment.serverUrl;
  return {
    clientName: 'Any other MCP client (and the MCP SDKs)',
    available: true,
    clientId: localToolsClientId,
    callbackRule: `For \`${localToolsClientId}\`: ${localToolsCallbacks}. A metadata document's client uses the callbacks its document lists.`,
    instructions: [
      `Give the client \`${url}\`. It discovers the rest from the \`401\` answer (protected-resource metadata, then the authorization server's), then runs the authorization code flow with PKCE (\`S256\`), \`scope=mcp:access\`, \`resource=${url}\` and a \`state\` of its own, which is required here and which it checks on the callback. There is no dynamic registration; the client identifies itself with either:`,
      `- a Client ID Metadata Document: an https URL as \`client_id\` (the MCP SDKs' \`clientMetadataUrl\`), ${documentHosts(deployment) ?? 'which this server does not accept (`OAUTH_CIMD_HOSTS` is empty)'};`,
      `- the built-in client ID \`${localToolsClientId}\` with one of its loopback callbacks, as in the snippet; or a client the operator adds in \`OAUTH_CLIENTS\`.`,
      '',
      'Access tokens last 7 days and come without a refresh token: the client signs in again after.',
    ].join('\n'),
    configSnippet: json({
      server_url: url,
      client_id: localToolsClientId,
      redirect_uri: 'http://127.0.0.1:<free port>/callback',
      scope: 'mcp:access',
    }),
    docsUrl: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization',
  };
}

/** Whether `OAUTH_CIMD_HOSTS` lets a metadata document come from `host`. */
function accepts({ cimdHosts }: McpDeployment, host: string): boolean {
  return cimdHosts === '*' || cimdHosts.includes(host);
}

/** Where metadata documents are accepted from, as words; null when nowhere. */
function documentHosts({ cimdHosts }: McpDeployment): string | null {
  if (cimdHosts === '*') return 'from any public host';
  if (cimdHosts.length === 0) return null;
  return `from ${cimdHosts.map((host) => `\`${host}\``).join(', ')}`;
}

/** The callbacks of the built-in client, as a sentence. */
const localToolsCallbacks = `any port on ${anyPortCallbackHosts.map((h) => `\`http://${h}\``).join(', ')}, path ${localToolsCallbackPaths.map((p) => `\`${p}\``).join(', ')}`;

const mcpRemoteCallbackRule = `\`mcp-remote\` listens on \`http://localhost:<port>/oauth/callback\`, the port derived from the server URL (3335–49150); \`${localToolsClientId}\` accepts any port there.`;

/** The `mcpServers` entry that runs the pinned `mcp-remote` with the built-in client ID. */
function mcpRemoteSnippet(url: string): string {
  const args = [
    '-y',
    `mcp-remote@${mcpRemoteVersion}`,
    url,
    '--static-oauth-client-info',
    JSON.stringify({ client_id: localToolsClientId }),
  ];
  return json({ mcpServers: { atelier: { command: 'npx', args } } });
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
