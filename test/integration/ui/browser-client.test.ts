import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { freePort } from '../../helpers/net.ts';
import { authorizedCallback } from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const clientId = 'atelier-local-tools';
const redirectUri = 'http://localhost:43312/oauth/callback';

/** A web-hosted agent's site: one empty page on its own origin, whose scripts call Atelier. */
async function agentSite() {
  const port = await freePort();
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end('<!doctype html><title>agent</title>');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'browser-agent', version: '1.0.0' },
  },
};

describe('a browser-based MCP client on another origin, in Chromium (issue 18)', {
  skip: withoutBrowser,
}, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  let listedSite: Awaited<ReturnType<typeof agentSite>>;
  let otherSite: Awaited<ReturnType<typeof agentSite>>;
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    listedSite = await agentSite();
    otherSite = await agentSite();
    t = await startTestApp(database, { env: { MCP_ALLOWED_ORIGINS: listedSite.origin } });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await listedSite?.close();
    await otherSite?.close();
    await database?.close();
  });

  /** A code for a fresh person, and the PKCE verifier the page exchanges it with. */
  const freshCode = async (email: string) => {
    const { account } = await seedAccount(t.app);
    const { callback, pkce } = await authorizedCallback(t, {
      accountId: account.id,
      who: { email, password: 'a browser client password' },
      clientId,
      redirectUri,
    });
    return { code: callback.searchParams.get('code')!, verifier: pkce.verifier };
  };

  it('a listed origin discovers from the 401, exchanges the code and initializes /mcp', async () => {
    const { code, verifier } = await freshCode('browser-client@example.test');
    const page = await browser.newPage();
    try {
      await page.goto(`${listedSite.origin}/`);
      // Everything below runs as the page's own script: fetch() under the CORS rules.
      const seen = await page.evaluate(
        async (a) => {
          const mcpHeaders = {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          };
          const unauthorized = await fetch(`${a.base}/mcp`, {
            method: 'POST',
            headers: mcpHeaders,
            body: JSON.stringify(a.initialize),
          });
          const challenge = unauthorized.headers.get('www-authenticate') ?? '';
          const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? '';
          const resource = await (
            await fetch(metadataUrl, { headers: { 'mcp-protocol-version': '2025-11-25' } })
          ).json();
          const issuer = resource.authorization_servers[0];
          const server = await (
            await fetch(`${issuer}/.well-known/oauth-authorization-server`, {
              headers: { 'mcp-protocol-version': '2025-11-25' },
            })
          ).json();
          const keys = await (await fetch(server.jwks_uri)).json();
          const tokenResponse = await fetch(server.token_endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              grant_type: 'authorization_code',
              client_id: a.clientId,
              code: a.code,
              redirect_uri: a.redirectUri,
              code_verifier: a.verifier,
              resource: resource.resource,
            }),
          });
          const tokens = await tokenResponse.json();
          const answered = await fetch(resource.resource, {
            method: 'POST',
            headers: { ...mcpHeaders, authorization: `Bearer ${tokens.access_token}` },
            body: JSON.stringify(a.initialize),
          });
          return {
            unauthorized: unauthorized.status,
            metadataUrl,
            keyCount: keys.keys.length,
            tokenStatus: tokenResponse.status,
            tokenType: tokens.token_type,
            mcpStatus: answered.status,
            mcpBody: await answered.text(),
          };
        },
        { base: t.url, clientId, redirectUri, code, verifier, initialize },
      );
      assert.equal(seen.unauthorized, 401);
      assert.equal(seen.metadataUrl, `${t.url}/.well-known/oauth-protected-resource/mcp`);
      assert.ok(seen.keyCount >= 1);
      assert.deepEqual([seen.tokenStatus, seen.tokenType], [200, 'Bearer']);
      assert.equal(seen.mcpStatus, 200);
      assert.match(seen.mcpBody, /"serverInfo":\{"name":"atelier"/);
    } finally {
      await page.close();
    }
  });

  it('a page of an origin not listed cannot call /mcp, even with a good token', async () => {
    const { code, verifier } = await freshCode('browser-other@example.test');
    const page = await browser.newPage();
    try {
      await page.goto(`${otherSite.origin}/`);
      const seen = await page.evaluate(
        async (a) => {
          // The token exchange is open to every origin; /mcp is not.
          const tokens = await (
            await fetch(`${a.base}/oauth/token`, {
              method: 'POST',
              body: new URLSearchParams({
                grant_type: 'authorization_code',
                client_id: a.clientId,
                code: a.code,
                redirect_uri: a.redirectUri,
                code_verifier: a.verifier,
                resource: `${a.base}/mcp`,
              }),
            })
          ).json();
          try {
            const response = await fetch(`${a.base}/mcp`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                authorization: `Bearer ${tokens.access_token}`,
              },
              body: JSON.stringify(a.initialize),
            });
            return { gotToken: typeof tokens.access_token === 'string', mcp: response.status };
          } catch (error) {
            return { gotToken: typeof tokens.access_token === 'string', mcp: String(error) };
          }
        },
        { base: t.url, clientId, redirectUri, code, verifier, initialize },
      );
      assert.equal(seen.gotToken, true);
      assert.equal(seen.mcp, 'TypeError: Failed to fetch');
    } finally {
      await page.close();
    }
  });
});
