import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinClients, localToolsClientId } from '../../src/auth/oauth/clients.ts';
import { redirectUriMatches } from '../../src/auth/oauth/redirect-uri.ts';
import {
  type McpClientInstruction,
  mcpClientInstructions,
} from '../../src/services/mcp-client-instructions.ts';

// Issue 18: what each client needs, for the deployment at hand (local http or public https).

const local = mcpClientInstructions({ serverUrl: 'http://localhost:8080/mcp', cimdHosts: '*' });
const publicHttps = mcpClientInstructions({
  serverUrl: 'https://atelier.example.com/mcp',
  cimdHosts: '*',
});

const named = (entries: McpClientInstruction[], name: string) => {
  const entry = entries.find((e) => e.clientName === name);
  assert.ok(entry, name);
  return entry;
};

describe('MCP client instructions', () => {
  it('name every client people run, each with this URL in its command or configuration', () => {
    assert.deepEqual(
      local.map((e) => e.clientName),
      [
        'Claude Code',
        'VS Code',
        'Cursor',
        'Claude Desktop',
        'ChatGPT and other web-hosted agents',
        'MCP Inspector',
        'Any other MCP client (and the MCP SDKs)',
      ],
    );
    for (const entry of local) {
      assert.equal(entry.serverUrl, 'http://localhost:8080/mcp');
      assert.ok(entry.callbackRule.length > 0, entry.clientName);
      if (entry.configSnippet !== null)
        assert.ok(entry.configSnippet.includes(entry.serverUrl), entry.clientName);
    }
  });

  it('the generic entry names every parameter the authorization requires, state included', () => {
    // Spec §4.3: response_type=code, PKCE S256, scope, resource and state are all required.
    const generic = named(local, 'Any other MCP client (and the MCP SDKs)').instructions;
    for (const required of [
      'authorization code',
      'S256',
      'scope=mcp:access',
      'resource=',
      '`state`',
    ])
      assert.ok(generic.includes(required), required);
    assert.match(generic, /`state` of its own, which is required/);
  });

  it('give the built-in client ID to the clients that cannot send a metadata document', () => {
    const withId = local.filter((e) => e.clientId !== null).map((e) => e.clientName);
    assert.deepEqual(withId, [
      'Claude Code',
      'Cursor',
      'Claude Desktop',
      'MCP Inspector',
      'Any other MCP client (and the MCP SDKs)',
    ]);
    for (const entry of local.filter((e) => e.clientId !== null)) {
      assert.equal(entry.clientId, localToolsClientId);
      assert.ok(entry.configSnippet?.includes(localToolsClientId), entry.clientName);
    }
  });

  it('every callback the instructions promise is one the built-in client accepts', () => {
    const registered = builtinClients.find((c) => c.client_id === localToolsClientId)!;
    for (const callback of [
      'http://localhost:53123/callback', // Claude Code, a free port
      'http://localhost:21337/oauth/callback', // mcp-remote, its port from the server URL
      'http://127.0.0.1:6274/oauth/callback', // the web Inspector at its default address
      'http://localhost:6274/oauth/callback', // the web Inspector opened as localhost
      'http://127.0.0.1:6276/oauth/callback', // the Inspector's CLI and TUI
      'http://127.0.0.1:40000/callback', // the generic snippet, any free port
      'http://127.0.0.1:33418/', // VS Code told a client ID
    ])
      assert.ok(redirectUriMatches(registered.redirect_uris, callback), callback);
  });

  it('mcp-remote runs pinned, with the built-in client ID, for Claude Desktop and Cursor', () => {
    for (const name of ['Claude Desktop', 'Cursor']) {
      const snippet = JSON.parse(named(local, name).configSnippet!);
      assert.deepEqual(snippet.mcpServers.atelier, {
        command: 'npx',
        args: [
          '-y',
          'mcp-remote@0.15.1',
          'http://localhost:8080/mcp',
          '--static-oauth-client-info',
          '{"client_id":"atelier-local-tools"}',
        ],
      });
    }
  });

  it('the MCP Inspector runs pinned, with the built-in client ID, and lists the tools', () => {
    assert.equal(
      named(local, 'MCP Inspector').configSnippet,
      'npx @modelcontextprotocol/inspector@2.12.0 --cli http://localhost:8080/mcp --transport http --client-id atelier-local-tools --method tools/list',
    );
  });

  it('web-hosted agents: not on a local http server, and the entry says what to change', () => {
    const here = named(local, 'ChatGPT and other web-hosted agents');
    assert.equal(here.available, false);
    assert.match(here.instructions, /not a public https address/);
    assert.match(here.instructions, /`PUBLIC_URL`/);
    for (const entry of local.filter((e) => e !== here)) assert.equal(entry.available, true);

    const there = named(publicHttps, 'ChatGPT and other web-hosted agents');
    assert.equal(there.available, true);
    assert.equal(there.clientId, null);
    assert.match(there.instructions, /https:\/\/atelier\.example\.com\/mcp/);
    assert.match(there.instructions, /from any public host/);
  });

  it('an https URL on a loopback, private or local host is not public', () => {
    for (const host of ['localhost:8443', '192.168.1.20', 'atelier.local', '[fd00::1]']) {
      const entries = mcpClientInstructions({ serverUrl: `https://${host}/mcp`, cimdHosts: '*' });
      assert.equal(named(entries, 'ChatGPT and other web-hosted agents').available, false, host);
    }
  });

  it('follow OAUTH_CIMD_HOSTS: VS Code needs vscode.dev, web agents need some host', () => {
    const none = mcpClientInstructions({
      serverUrl: 'https://atelier.example.com/mcp',
      cimdHosts: [],
    });
    const vscode = named(none, 'VS Code');
    assert.equal(vscode.available, false);
    assert.match(vscode.instructions, /add `vscode\.dev` to `OAUTH_CIMD_HOSTS`/);
    const agents = named(none, 'ChatGPT and other web-hosted agents');
    assert.equal(agents.available, false);
    assert.match(agents.instructions, /`OAUTH_CIMD_HOSTS` is empty/);
    assert.match(
      named(none, 'Any other MCP client (and the MCP SDKs)').instructions,
      /does not accept \(`OAUTH_CIMD_HOSTS` is empty\)/,
    );

    const listed = mcpClientInstructions({
      serverUrl: 'https://atelier.example.com/mcp',
      cimdHosts: ['vscode.dev', 'chatgpt.com'],
    });
    assert.equal(named(listed, 'VS Code').available, true);
    assert.match(
      named(listed, 'ChatGPT and other web-hosted agents').instructions,
      /from `vscode\.dev`, `chatgpt\.com`/,
    );
  });
});
