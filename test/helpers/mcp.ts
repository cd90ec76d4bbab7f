import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from './app.ts';
import { authorizedCallback, exchangeWithOauth4webapi } from './oauth-flow.ts';

const clientId = 'atelier-local-tools';
const redirectUri = 'http://localhost:45999/oauth/callback';

/**
 * An MCP access token for `accountId`, obtained as a person and an agent would: a built-in
 * sign-in for the account, authorize → sign in → consent in the browser, and the code exchange.
 */
export async function mcpAccessToken(t: TestApp, accountId: string): Promise<string> {
  const { callback, pkce } = await authorizedCallback(t, {
    accountId,
    who: { email: `mcp-${accountId}@example.test`, password: 'an mcp password' },
    clientId,
    redirectUri,
  });
  const tokens = await exchangeWithOauth4webapi(t.url, clientId, redirectUri, callback, pkce);
  return tokens.access_token;
}

/** The MCP SDK's client, connected to the app's `/mcp` with `token`; the caller closes it. */
export async function connectMcpClient(t: TestApp, token: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/**
 * One raw JSON-RPC request to `baseUrl/mcp` (default `tools/list`), with `headers` such as the
 * bearer token: for the answers a client library would hide (status codes, challenges).
 */
export function postMcp(
  baseUrl: string,
  headers: Record<string, string>,
  method = 'tools/list',
): Promise<Response> {
  return sendMcp(baseUrl, headers, { jsonrpc: '2.0', id: 1, method });
}

/** One raw JSON-RPC message (a request or a notification) to `baseUrl/mcp`. */
export function sendMcp(
  baseUrl: string,
  headers: Record<string, string>,
  message: Record<string, unknown>,
): Promise<Response> {
  return fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(message),
  });
}
