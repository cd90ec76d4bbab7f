import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { generate } from 'selfsigned';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { graphql } from '../../helpers/graphql.ts';
import { loopbackCallbackListener, RecordingProvider } from '../../helpers/mcp-sdk-auth.ts';
import { freePort } from '../../helpers/net.ts';
import { authorizeInBrowser, TestBrowser } from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const fixedRedirectUri = 'http://localhost:47000/oauth/callback';

describe('the MCP SDK client authorizes against Atelier', () => {
  let database: Database;
  let t: TestApp;
  let documentServer: Server;
  let metadataUrl: string;
  before(async () => {
    database = await createTestDatabase('pglite');
    const port = await freePort();
    metadataUrl = `https://localhost:${port}/sdk-client.json`;
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
    });
    documentServer = createServer({ key: pems.private, cert: pems.cert }, (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          client_id: metadataUrl,
          client_name: 'SDK test client (CIMD)',
          redirect_uris: ['http://localhost/oauth/callback'],
        }),
      );
    });
    await new Promise<void>((resolve) => documentServer.listen(port, '127.0.0.1', resolve));
    // The address filter stays on: "localhost" resolves to a public address, dialled locally.
    t = await startTestApp(database, {
      cimdFetch: {
        ca: pems.cert,
        resolveHost: async () => [{ address: '93.184.215.14', family: 4 }],
        dialAddress: () => '127.0.0.1',
      },
    });
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => documentServer.close(resolve));
    await database.close();
  });

  const cases: Array<[string, () => { clientId?: string; metadataUrl?: string }]> = [
    ['a configured client ID', () => ({ clientId: 'atelier-local-tools' })],
    ['a Client ID Metadata Document URL', () => ({ metadataUrl })],
  ];
  for (const [label, client] of cases) {
    it(`with ${label}: discovery → authorize → sign in → consent → token`, async () => {
      const { account } = await seedAccount(t.app);
      const email = `sdk-${account.id}@example.test`;
      await t.app.services.identityProvider!.addUser({
        accountId: account.id,
        email,
        password: 'an sdk password',
      });
      const provider = new RecordingProvider(client(), fixedRedirectUri);
      const serverUrl = `${t.url}/mcp`;

      assert.equal(await auth(provider, { serverUrl }), 'REDIRECT');
      const started = provider.authorizationUrl!;
      assert.equal(started.origin + started.pathname, `${t.url}/oauth/authorize`);
      assert.equal(started.searchParams.get('resource'), serverUrl);
      assert.equal(started.searchParams.get('code_challenge_method'), 'S256');

      const callback = await authorizeInBrowser(new TestBrowser(t.url), t.url, started.href, {
        email,
        password: 'an sdk password',
      });
      assert.equal(callback.searchParams.get('state'), started.searchParams.get('state'));
      assert.equal(
        await auth(provider, { serverUrl, authorizationCode: callback.searchParams.get('code')! }),
        'AUTHORIZED',
      );

      const accessToken = provider.tokens()!.access_token;
      const principal = await t.app.oauth.tokens.verify(accessToken);
      assert.equal(principal.accountId, account.id);
      assert.equal(principal.clientId, client().clientId ?? metadataUrl);
    });
  }

  // Issue 18: the generic entry of listMcpClientInstructions tells an SDK client its client ID
  // and a loopback callback at a port it picks; this runs exactly those documented values.
  it('with the documented generic setup: the built-in client ID, 127.0.0.1 at a random port', async (ctx) => {
    const { account } = await seedAccount(t.app);
    const email = `sdk-loopback-${account.id}@example.test`;
    await t.app.services.identityProvider!.addUser({
      accountId: account.id,
      email,
      password: 'an sdk password',
    });
    const documented = await documentedSetup(t.url);
    // The client's own callback listener, as a desktop client runs it: port chosen by the system.
    const listener = await loopbackCallbackListener();
    ctx.after(listener.close);
    const redirectUri = documented.redirect_uri.replace(
      '<free port>',
      new URL(listener.redirectUri).port,
    );
    assert.equal(redirectUri, listener.redirectUri, 'the documented callback is where it listens');
    const serverUrl = documented.server_url;
    const provider = new RecordingProvider({ clientId: documented.client_id }, redirectUri);

    assert.equal(await auth(provider, { serverUrl }), 'REDIRECT');
    const started = provider.authorizationUrl!;
    assert.equal(started.searchParams.get('redirect_uri'), redirectUri);
    assert.equal(started.searchParams.get('scope'), documented.scope);
    const sentBack = await authorizeInBrowser(new TestBrowser(t.url), t.url, started.href, {
      email,
      password: 'an sdk password',
    });
    // The browser follows the redirect to the client's listener, which reads the code there.
    const callback = await listener.follow(sentBack);
    assert.equal(callback.origin + callback.pathname, redirectUri);
    assert.equal(callback.searchParams.get('state'), started.searchParams.get('state'));
    assert.equal(
      await auth(provider, { serverUrl, authorizationCode: callback.searchParams.get('code')! }),
      'AUTHORIZED',
    );

    const principal = await t.app.oauth.tokens.verify(provider.tokens()!.access_token);
    assert.equal(principal.accountId, account.id);
    assert.equal(principal.clientId, documented.client_id);
  });
});

/** The generic entry's snippet, as served: the values an SDK client is told to use. */
async function documentedSetup(url: string) {
  const response = await graphql<{
    listMcpClientInstructions: { clientName: string; configSnippet: string }[];
  }>(url, { query: '{ listMcpClientInstructions { clientName configSnippet } }' });
  const generic = response.body.data!.listMcpClientInstructions.find((entry) =>
    entry.clientName.startsWith('Any other MCP client'),
  )!;
  return JSON.parse(generic.configSnippet) as {
    server_url: string;
    client_id: string;
    redirect_uri: string;
    scope: string;
  };
}
