import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { mcpAccessToken, postMcp } from '../../helpers/mcp.ts';
import { authorizedCallback, codeExchangeFields } from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const listed = 'https://agent.example.com';
const unlisted = 'https://elsewhere.example.com';
const clientId = 'atelier-local-tools';
const redirectUri = 'http://localhost:43311/oauth/callback';

/** A browser's preflight: OPTIONS with the method and headers the page is about to use. */
function preflight(url: string, origin: string, method: string, headers: string) {
  return fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    },
  });
}

/** The header's comma-separated list, lower case. */
const listOf = (response: Response, name: string) =>
  (response.headers.get(name) ?? '').split(',').map((item) => item.trim().toLowerCase());

describe('browser-based MCP clients: CORS (issue 18)', () => {
  let database: Database;
  let t: TestApp;
  let token: string;
  before(async () => {
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: { MCP_ALLOWED_ORIGINS: `${listed},http://other.test` },
    });
    const { account } = await seedAccount(t.app);
    token = await mcpAccessToken(t, account.id);
  });
  after(async () => {
    await t?.close();
    await database?.close();
  });

  it('discovery documents and the keys are readable from any origin, without credentials', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
      '/oauth/jwks',
    ]) {
      const ask = await preflight(`${t.url}${path}`, unlisted, 'GET', 'mcp-protocol-version');
      assert.equal(ask.status, 204, path);
      assert.equal(ask.headers.get('access-control-allow-origin'), '*', path);
      assert.deepEqual(listOf(ask, 'access-control-allow-methods'), ['get'], path);
      assert.ok(listOf(ask, 'access-control-allow-headers').includes('mcp-protocol-version'), path);
      assert.equal(ask.headers.get('access-control-max-age'), '7200', path);
      assert.equal(ask.headers.get('access-control-allow-credentials'), null, path);

      const got = await fetch(`${t.url}${path}`, { headers: { origin: unlisted } });
      assert.equal(got.status, 200, path);
      assert.equal(got.headers.get('access-control-allow-origin'), '*', path);
      assert.equal(got.headers.get('access-control-allow-credentials'), null, path);
      await got.body?.cancel();
    }
  });

  it('the token endpoint answers a page of any origin, its errors included', async () => {
    const ask = await preflight(`${t.url}/oauth/token`, unlisted, 'POST', 'content-type');
    assert.equal(ask.status, 204);
    assert.equal(ask.headers.get('access-control-allow-origin'), '*');
    assert.deepEqual(listOf(ask, 'access-control-allow-methods'), ['post']);
    assert.ok(listOf(ask, 'access-control-allow-headers').includes('content-type'));

    const { account } = await seedAccount(t.app);
    const { callback, pkce } = await authorizedCallback(t, {
      accountId: account.id,
      who: { email: 'cors-token@example.test', password: 'a cors password' },
      clientId,
      redirectUri,
    });
    const fields = codeExchangeFields(t.url, clientId, redirectUri, callback, pkce);
    const exchange = (body: Record<string, string>) =>
      fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { origin: unlisted, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
    const refused = await exchange({ ...fields, code_verifier: 'x'.repeat(43) });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant');

    const issued = await exchange(fields);
    assert.equal(issued.status, 200);
    assert.equal(issued.headers.get('access-control-allow-origin'), '*');
    assert.equal(issued.headers.get('access-control-allow-credentials'), null);
    assert.equal(((await issued.json()) as { token_type: string }).token_type, 'Bearer');
  });

  it('/mcp: a listed origin gets its preflight, its challenge and its answer', async () => {
    const ask = await preflight(
      `${t.url}/mcp`,
      listed,
      'POST',
      'authorization, content-type, mcp-protocol-version',
    );
    assert.equal(ask.status, 204);
    assert.equal(ask.headers.get('access-control-allow-origin'), listed);
    assert.ok(listOf(ask, 'vary').includes('origin'));
    assert.ok(listOf(ask, 'access-control-allow-methods').includes('post'));
    for (const header of [
      'authorization',
      'content-type',
      'mcp-protocol-version',
      'mcp-session-id',
    ])
      assert.ok(listOf(ask, 'access-control-allow-headers').includes(header), header);
    assert.equal(ask.headers.get('access-control-allow-credentials'), null);

    const challenged = await postMcp(t.url, { origin: listed });
    assert.equal(challenged.status, 401);
    assert.equal(challenged.headers.get('access-control-allow-origin'), listed);
    assert.ok(listOf(challenged, 'access-control-expose-headers').includes('www-authenticate'));
    assert.match(challenged.headers.get('www-authenticate')!, /resource_metadata=/);
    await challenged.body?.cancel();

    const answered = await postMcp(t.url, { origin: listed, authorization: `Bearer ${token}` });
    assert.equal(answered.status, 200);
    assert.equal(answered.headers.get('access-control-allow-origin'), listed);
    assert.ok(listOf(answered, 'access-control-expose-headers').includes('www-authenticate'));
    assert.equal(answered.headers.get('access-control-allow-credentials'), null);
    assert.match(await answered.text(), /"tools"/);
  });

  it('/mcp: an origin not listed stays 403, preflight included, and learns nothing', async () => {
    const ask = await preflight(`${t.url}/mcp`, unlisted, 'POST', 'authorization');
    assert.equal(ask.status, 403);
    assert.equal(ask.headers.get('access-control-allow-origin'), null);
    assert.equal(ask.headers.get('access-control-allow-methods'), null);
    assert.equal(((await ask.json()) as { error: { code: string } }).error.code, '110202');

    // A near miss of a listed origin (another scheme, a port) is another origin.
    for (const origin of [unlisted, 'http://agent.example.com', `${listed}:8443`]) {
      const refused = await postMcp(t.url, { origin, authorization: `Bearer ${token}` });
      assert.equal(refused.status, 403, origin);
      assert.equal(refused.headers.get('access-control-allow-origin'), null, origin);
      await refused.body?.cancel();
    }
  });

  it('/mcp: requests without an Origin and from the server’s own origin work as before', async () => {
    const sameSite: Array<Record<string, string>> = [{}, { origin: new URL(t.url).origin }];
    for (const headers of sameSite) {
      const answered = await postMcp(t.url, { ...headers, authorization: `Bearer ${token}` });
      assert.equal(answered.status, 200);
      await answered.body?.cancel();
    }
  });
});
