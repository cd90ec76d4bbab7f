import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { loopbackCallbackListener, RecordingProvider } from '../../helpers/mcp-sdk-auth.ts';
import {
  documentHost,
  localCertificateAuthority,
  startAuthorization,
} from '../../helpers/metadata-documents.ts';
import { freePort } from '../../helpers/net.ts';
import { authorizeInBrowser, TestBrowser } from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 18: CIMD tried on one machine. With OAUTH_CIMD_DEV_CA set, documents on localhost,
// 127.0.0.1 and [::1] are fetched from this computer over TLS verified against that CA alone.
// Nothing here overrides the fetch (no test DNS, no dialled address): this is what a developer
// runs.
describe('the OAUTH_CIMD_DEV_CA development switch', () => {
  let database: Database;
  let ca: Awaited<ReturnType<typeof localCertificateAuthority>>;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase('pglite');
    ca = await localCertificateAuthority();
    host = await documentHost(ca.server, { ipv6: true });
    // An agent under development on this computer: its callback is a portless 127.0.0.1 one.
    host.serveJson('/sdk-client.json', (self) => ({
      client_id: self,
      client_name: 'SDK client on this computer',
      redirect_uris: ['http://127.0.0.1/callback'],
    }));
    t = await startTestApp(database, { env: { OAUTH_CIMD_DEV_CA: ca.caFile } });
  });
  after(async () => {
    await t.close();
    await host.close();
    await database.close();
    ca.close();
  });

  it('the MCP SDK client connects with a document on localhost and a 127.0.0.1 callback on a random port', async (ctx) => {
    const { account } = await seedAccount(t.app);
    const who = { email: `dev-ca-${account.id}@example.test`, password: 'a dev ca password' };
    await t.app.services.identityProvider!.addUser({ accountId: account.id, ...who });
    const listener = await loopbackCallbackListener();
    ctx.after(listener.close);
    const metadataUrl = `https://localhost:${host.port}/sdk-client.json`;
    const provider = new RecordingProvider({ metadataUrl }, listener.redirectUri);
    const serverUrl = `${t.url}/mcp`;

    assert.equal(await auth(provider, { serverUrl }), 'REDIRECT');
    const started = provider.authorizationUrl!;
    assert.equal(started.searchParams.get('client_id'), metadataUrl);
    assert.equal(started.searchParams.get('redirect_uri'), listener.redirectUri);
    const sentBack = await authorizeInBrowser(new TestBrowser(t.url), t.url, started.href, who);
    const callback = await listener.follow(sentBack);
    assert.equal(callback.searchParams.get('state'), started.searchParams.get('state'));
    const code = callback.searchParams.get('code')!;
    assert.equal(await auth(provider, { serverUrl, authorizationCode: code }), 'AUTHORIZED');

    // The agent works: the SDK's transport sends the token it keeps in the provider.
    const client = new Client({ name: 'dev-ca-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }),
    );
    ctx.after(() => client.close());
    const result = await client.callTool({ name: 'get_account', arguments: {} });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal((result.structuredContent as { alias: string }).alias, account.alias);
    const principal = await t.app.oauth.tokens.verify(provider.tokens()!.access_token);
    assert.deepEqual([principal.accountId, principal.clientId], [account.id, metadataUrl]);
  });

  it('accepts documents at the 127.0.0.1 and [::1] literals too, under every other rule', async () => {
    for (const literal of ['127.0.0.1', '[::1]']) {
      const accepted = await startAuthorization(t, `https://${literal}:${host.port}/good.json`);
      assert.equal(accepted.status, 303, await accepted.text());
      assert.match(accepted.headers.get('location') ?? '', /\/login/, literal);
      assert.equal(host.hits.get(`${literal}:${host.port}/good.json`), 1, literal);
    }
    for (const [path, reason] of [
      ['/liar.json', /names another client_id/],
      ['/redirect.json', /redirects are not followed/],
      ['/big.json', /larger than 5120 bytes/],
      ['/secret-client.json', /only public clients/],
    ] as const) {
      const res = await startAuthorization(t, `https://localhost:${host.port}${path}`);
      assert.equal(res.status, 400, path);
      assert.equal(res.headers.get('location'), null, path);
      assert.match(await res.text(), reason, path);
    }
  });

  it('refuses a document on this computer whose certificate that CA did not issue', async () => {
    const stranger = await documentHost(); // self-signed: trusted by nobody
    const closed = await freePort();
    try {
      const answers = new Set<string>();
      for (const name of ['localhost', '127.0.0.1']) {
        const res = await startAuthorization(t, `https://${name}:${stranger.port}/good.json`);
        assert.equal(res.status, 400, name);
        answers.add((await res.text()).replace(String(stranger.port), 'PORT'));
        // A port nobody listens on answers the same: the refusal tells no port scan anything.
        const none = await startAuthorization(t, `https://${name}:${closed}/good.json`);
        assert.equal(none.status, 400, name);
        answers.add((await none.text()).replace(String(closed), 'PORT'));
      }
      assert.equal(answers.size, 1, [...answers].join('\n'));
      assert.match([...answers][0]!, /cannot be fetched from this computer/);
      assert.equal(stranger.hits.get('/good.json'), undefined, 'no request got past TLS');
    } finally {
      await stranger.close();
    }
  });

  it('leaves the public address filter on for every other host', async () => {
    const hits = host.hits.get('/good.json') ?? 0;
    for (const [clientId, reason] of [
      // Loopback, but not one of this computer's three names.
      [
        `https://127.0.0.2:${host.port}/good.json`,
        /points at a private address \(127\.0\.0\.2: loopback\)/,
      ],
      [`https://10.0.0.5:${host.port}/good.json`, /points at a private address/],
    ] as const) {
      const res = await startAuthorization(t, clientId);
      assert.equal(res.status, 400, clientId);
      assert.match(await res.text(), reason, clientId);
    }
    // A public-looking name whose DNS answer is this computer is still refused.
    const resolving = await startTestApp(database, {
      env: { OAUTH_CIMD_DEV_CA: ca.caFile },
      cimdFetch: { resolveHost: async () => [{ address: '127.0.0.1', family: 4 }] },
    });
    try {
      const res = await startAuthorization(
        resolving,
        `https://loopback.agent.example:${host.port}/good.json`,
      );
      assert.equal(res.status, 400);
      assert.match(await res.text(), /loopback\.agent\.example has no public address/);
    } finally {
      await resolving.close();
    }
    assert.equal(host.hits.get('/good.json') ?? 0, hits, 'nothing was fetched');
  });

  it('admits this computer only where OAUTH_CIMD_HOSTS does: a list must name the host', async () => {
    const listed = await startTestApp(database, {
      env: { OAUTH_CIMD_DEV_CA: ca.caFile, OAUTH_CIMD_HOSTS: 'localhost,agent.example' },
    });
    try {
      const named = await startAuthorization(listed, `https://localhost:${host.port}/good.json`);
      assert.equal(named.status, 303, await named.text());
      const unnamed = await startAuthorization(listed, `https://127.0.0.1:${host.port}/good.json`);
      assert.equal(unnamed.status, 400);
      assert.match(await unnamed.text(), /on a host this server does not accept/);
    } finally {
      await listed.close();
    }
  });

  it('without the switch, the same documents on this computer are refused, as in production', async () => {
    const hits = host.hits.get('/sdk-client.json') ?? 0;
    const plain = await startTestApp(database);
    try {
      for (const [name, reason] of [
        ['localhost', /localhost has no public address/],
        ['127.0.0.1', /points at a private address/],
      ] as const) {
        const res = await startAuthorization(plain, `https://${name}:${host.port}/sdk-client.json`);
        assert.equal(res.status, 400, name);
        assert.match(await res.text(), reason, name);
      }
    } finally {
      await plain.close();
    }
    assert.equal(host.hits.get('/sdk-client.json') ?? 0, hits, 'nothing was fetched');
  });
});
