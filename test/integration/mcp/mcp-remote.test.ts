import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Browser } from 'playwright-core';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { mcpRemoteVersion } from '../../../src/services/mcp-client-instructions.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, signInAndAllow, withoutBrowser } from '../../helpers/browser.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { fakeModel } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { lines } from '../../helpers/lines.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 18: Claude Desktop and Cursor reach a remote server through mcp-remote (from npm). This
// runs exactly the configuration listMcpClientInstructions serves for Claude Desktop: npx
// starts the pinned mcp-remote (installed as a devDependency, so no network), which signs in
// with the built-in client ID while Chromium plays the person, then proxies MCP over stdio.

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
// Ten progress steps over two seconds, so a wait sees the task between 0 and 1.
const models = JSON.stringify([fakeModel('mdl_test-steady', { durationMs: 2_000 })]);
const who = { email: 'desktop-user@example.test', password: 'a desktop password' };

/** The Claude Desktop entry as served, with this server's URL. */
async function servedDesktopEntry(url: string) {
  const response = await graphql<{
    listMcpClientInstructions: { clientName: string; clientId: string; configSnippet: string }[];
  }>(url, { query: '{ listMcpClientInstructions { clientName clientId configSnippet } }' });
  const entry = response.body.data!.listMcpClientInstructions.find(
    (e) => e.clientName === 'Claude Desktop',
  )!;
  const config = JSON.parse(entry.configSnippet) as {
    mcpServers: { atelier: { command: string; args: string[] } };
  };
  return { clientId: entry.clientId, ...config.mcpServers.atelier };
}

describe('mcp-remote, as Claude Desktop and Cursor run it (issue 18)', {
  skip: withoutBrowser,
}, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  let configDir: string;
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, { env: { MODELS: models } });
    const { account } = await seedAccount(t.app);
    await t.app.services.identityProvider!.addUser({ accountId: account.id, ...who });
    configDir = mkdtempSync(path.join(tmpdir(), 'mcp-remote-'));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await database?.close();
    if (configDir !== undefined) rmSync(configDir, { recursive: true, force: true });
  });

  /** The served command, started the way a desktop app starts it; the caller closes the client. */
  const startMcpRemote = async () => {
    const { command, args } = await servedDesktopEntry(t.url);
    const transport = new StdioClientTransport({
      command,
      args,
      cwd: repoRoot,
      // BROWSER=true: xdg-open "opens" nothing; the test reads the address from stderr instead.
      env: { ...getDefaultEnvironment(), MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
      stderr: 'pipe',
    });
    const stderr = lines(transport.stderr as Readable);
    const client = new Client({ name: 'desktop-app', version: '1.0.0' });
    // mcp-remote ending early says why on its stderr: the failure carries it.
    const connected = client.connect(transport, { timeout: 120_000 }).catch((error: Error) => {
      throw new Error(`mcp-remote ended: ${error.message}\n${stderr.seen.join('\n')}`);
    });
    // Awaited by each test, or not if it failed before: never an unhandled rejection.
    connected.catch(() => {});
    /** The first line of mcp-remote's stderr that matches, or its failure if it ends first. */
    const firstLine = (pattern: RegExp) =>
      Promise.race([
        stderr.first(pattern),
        connected.then(() => assert.fail(`connected before printing ${pattern}`)),
      ]);
    return { client, connected, stderr, firstLine };
  };

  it('pins the mcp-remote that package.json installs, with the built-in client ID', async () => {
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    assert.equal(manifest.devDependencies['mcp-remote'], mcpRemoteVersion);
    const { command, args, clientId } = await servedDesktopEntry(t.url);
    assert.deepEqual(
      [command, ...args],
      [
        'npx',
        '-y',
        `mcp-remote@${mcpRemoteVersion}`,
        `${t.url}/mcp`,
        '--static-oauth-client-info',
        JSON.stringify({ client_id: clientId }),
      ],
    );
  });

  it('signs in in the browser, then lists tools, generates, sees progress and downloads', async () => {
    const { client, connected, firstLine } = await startMcpRemote();
    try {
      const authorizeUrl = await firstLine(/^https?:\/\/\S+\/oauth\/authorize\?/);
      const asked = new URL(authorizeUrl);
      assert.equal(asked.searchParams.get('client_id'), 'atelier-local-tools');
      assert.equal(asked.searchParams.get('resource'), `${t.url}/mcp`);
      const callback = new URL(asked.searchParams.get('redirect_uri')!);
      assert.equal(`${callback.protocol}//${callback.hostname}`, 'http://localhost');

      assert.equal(
        await signInAndAllow(browser, authorizeUrl, who),
        'MCP Inspector and local tools',
      );
      await connected;

      const { tools } = await client.listTools();
      for (const name of ['generate_image', 'wait_for_generation', 'get_download_urls'])
        assert.ok(
          tools.some((tool) => tool.name === name),
          name,
        );

      const submitted = await client.callTool({
        name: 'generate_image',
        arguments: { model_id: 'mdl_test-steady', prompt: 'a lighthouse', idempotency_key: 'd-1' },
      });
      assert.notEqual(submitted.isError, true, JSON.stringify(submitted.content));
      const { task_id } = submitted.structuredContent as { task_id: string };

      const progress: number[] = [];
      const waited = await client.callTool(
        { name: 'wait_for_generation', arguments: { task_id, timeout_seconds: 30 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress), timeout: 60_000 },
      );
      // The last one ("finished", 1) may come after the result through the proxy, and a
      // client drops a notification for a request already answered: only the climb is certain.
      assert.ok(
        progress.some((p) => p > 0 && p < 1),
        `progress between 0 and 1 in ${progress.join(', ')}`,
      );
      assert.deepEqual(
        progress,
        [...progress].sort((a, b) => a - b),
        'never goes back',
      );
      const { finish_code } = waited.structuredContent as { finish_code: number };
      assert.equal(finish_code, FinishCode.Ok);

      const link = (waited.content as { type: string; uri?: string; mimeType?: string }[]).find(
        (item) => item.type === 'resource_link',
      )!;
      assert.equal(link.mimeType, 'image/png');
      const download = await fetch(link.uri!);
      assert.equal(download.status, 200);
      const bytes = Buffer.from(await download.arrayBuffer());
      assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    } finally {
      await client.close();
    }
  });

  it('a second run reuses the stored token: no browser, tools listed', async () => {
    const { client, connected, stderr } = await startMcpRemote();
    try {
      await connected;
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'get_account'));
      const account = await client.callTool({ name: 'get_account', arguments: {} });
      assert.notEqual(account.isError, true);
      assert.equal(
        stderr.seen.find((line) => /\/oauth\/authorize\?/.test(line)),
        undefined,
        stderr.seen.join('\n'),
      );
    } finally {
      await client.close();
    }
  });
});
