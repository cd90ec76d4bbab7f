import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { documentHost, redirectUri, startAuthorization } from '../../helpers/metadata-documents.ts';
import {
  authorizeInBrowser,
  authorizeUrl,
  exchangeWithOauth4webapi,
  newPkce,
  TestBrowser,
} from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

describe('Client ID Metadata Documents', () => {
  let database: Database;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase('pglite');
    host = await documentHost();
    // The production address filter stays on: the test DNS answers a public address, which is
    // dialled at the local host (real DNS for localhost is refused, see below).
    t = await startTestApp(database, { cimdFetch: host.publicNetwork });
  });
  after(async () => {
    await t.close();
    await host.close();
    await database.close();
  });

  const start = startAuthorization;

  it('a document naming its own URL is a client: the whole flow works with the URL as client_id', async () => {
    const { account } = await seedAccount(t.app);
    await t.app.services.identityProvider!.addUser({
      accountId: account.id,
      email: 'cimd@example.test',
      password: 'a cimd password',
    });
    const clientId = `${host.base}/good.json`;
    const pkce = await newPkce();
    const browser = new TestBrowser(t.url);
    const callback = await authorizeInBrowser(
      browser,
      t.url,
      authorizeUrl(t.url, { clientId, redirectUri, pkce }),
      { email: 'cimd@example.test', password: 'a cimd password' },
    );
    const tokens = await exchangeWithOauth4webapi(t.url, clientId, redirectUri, callback, pkce);
    const principal = await t.app.oauth.tokens.verify(tokens.access_token);
    assert.equal(principal.clientId, clientId);
    const [connection] = await t.app.services.mcpConnections.list({
      accountId: account.id,
      role: 'user',
      credential: { kind: 'api_key', apiKeyId: 'x' },
    });
    assert.deepEqual(
      [connection?.clientName, connection?.clientUri],
      ['Good Agent', 'https://agent.example'],
    );
    assert.equal(
      host.hits.get('/good.json'),
      1,
      'cached per its Cache-Control: fetched once for authorize, consent and token',
    );
  });

  for (const [label, path, reason] of [
    ['a document that lies about its client_id', '/liar.json', /another client_id/],
    ['a document behind a redirect', '/redirect.json', /redirects are not followed/],
    ['a document that is too big', '/big.json', /larger than/],
    ['a confidential client', '/secret-client.json', /public clients/],
    ['a document without redirect URIs', '/no-redirects.json', /redirect_uris/],
    ['a missing document', '/missing.json', /HTTP 404/],
  ] as const) {
    it(`refuses ${label} on an error page, without redirecting`, async () => {
      const res = await start(t, `${host.base}${path}`);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
      assert.match(await res.text(), reason);
    });
  }

  it('refuses a client_id that is not in canonical form, before any fetch', async () => {
    const before = host.hits.get('/good.json') ?? 0;
    const { port } = host;
    for (const id of [
      `https://localhost:${port}/x/../good.json`,
      `https://localhost:${port}/./good.json`,
      `https://localhost:${port}/%2e/good.json`,
      `https://localhost:${port}/x/%2E%2E/good.json`,
      `https://LOCALHOST:${port}/good.json`,
      `https://localhost:0${port}/good.json`,
      `https://localhost:443/good.json`,
      `https://localhost:${port}/good.json?`,
      `https://localhost:${port}/good.json#`,
      `https://localhost:${port}\\good.json`,
    ]) {
      const res = await start(t, id);
      assert.equal(res.status, 400, id);
      assert.equal(res.headers.get('location'), null, id);
      assert.match(await res.text(), /not in canonical form/, id);
    }
    assert.equal(host.hits.get('/good.json') ?? 0, before, 'nothing was fetched');
  });

  it('does not cache failures', async () => {
    const before = host.hits.get('/liar.json') ?? 0;
    await start(t, `${host.base}/liar.json`);
    await start(t, `${host.base}/liar.json`);
    assert.equal(host.hits.get('/liar.json'), before + 2);
  });

  it('never fetches from a private or loopback address in production', async () => {
    const strict = await startTestApp(database);
    try {
      const before = host.hits.get('/good.json') ?? 0;
      const res = await start(strict, `${host.base}/good.json`);
      assert.equal(res.status, 400);
      assert.match(await res.text(), /localhost has no public address/);
      assert.equal(host.hits.get('/good.json') ?? 0, before, 'no request reached the host');
      for (const literal of [
        'https://127.0.0.1/client.json',
        'https://[::1]/client.json',
        'https://10.0.0.5/client.json',
        'https://169.254.169.254/latest.json',
      ]) {
        const r = await start(strict, literal);
        assert.equal(r.status, 400, literal);
        assert.match(await r.text(), /private address/, literal);
      }
    } finally {
      await strict.close();
    }
  });

  it('follows the deployment policy: an allowlist of hosts, or off; opaque IDs are never clients', async () => {
    const listed = await startTestApp(database, {
      env: { OAUTH_CIMD_HOSTS: 'agents.example.com' },
      cimdFetch: host.publicNetwork,
    });
    const off = await startTestApp(database, { env: { OAUTH_CIMD_HOSTS: '' } });
    try {
      assert.match(
        await (await start(listed, `${host.base}/good.json`)).text(),
        /host this server does not accept/,
      );
      assert.equal((await start(off, `${host.base}/good.json`)).status, 400);
      const metadata = (await (
        await fetch(`${off.url}/.well-known/oauth-authorization-server`)
      ).json()) as Record<string, unknown>;
      assert.equal(metadata.client_id_metadata_document_supported, false);
      for (const id of ['my-agent', 'http://agent.example/client.json', 'https://agent.example/']) {
        assert.equal((await start(t, id)).status, 400, id);
      }
    } finally {
      await listed.close();
      await off.close();
    }
  });
});
