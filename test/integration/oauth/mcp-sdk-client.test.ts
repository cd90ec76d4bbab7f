import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { generate } from 'selfsigned';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { freePort } from '../../helpers/net.ts';
import { authorizeInBrowser, TestBrowser } from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const fixedRedirectUri = 'http://localhost:47000/oauth/callback';

/** What an MCP host application keeps: the SDK calls it, the test plays the person. */
class RecordingProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  readonly clientMetadata: OAuthClientMetadata;
  readonly clientMetadataUrl: string | undefined;
  authorizationUrl: URL | undefined;
  #information: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';

  constructor(client: { clientId?: string; metadataUrl?: string }, redirectUri = fixedRedirectUri) {
    this.redirectUrl = redirectUri;
    this.clientMetadata = {
      client_name: 'SDK test client',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    this.#information = client.clientId === undefined ? undefined : { client_id: client.clientId };
    this.clientMetadataUrl = client.metadataUrl;
  }

  state() {
    return crypto.randomUUID();
  }
  clientInformation() {
    return this.#information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.#information = information;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

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
      const provider = new RecordingProvider(client());
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

  // Issue 18: the MCP Inspector's callback is on 127.0.0.1 at a port it picks; the built-in
  // client registers the portless http://127.0.0.1/callback, so any port is accepted.
  it('as atelier-local-tools with a http://127.0.0.1:<random port>/callback redirect', async (ctx) => {
    const { account } = await seedAccount(t.app);
    const email = `sdk-loopback-${account.id}@example.test`;
    await t.app.services.identityProvider!.addUser({
      accountId: account.id,
      email,
      password: 'an sdk password',
    });
    // The client's own callback listener, as a desktop client runs it: port chosen by the system.
    const callbackServer = createHttpServer((_req, res) => res.end('You may close this window.'));
    callbackServer.listen(0, '127.0.0.1');
    await once(callbackServer, 'listening');
    ctx.after(() => new Promise((resolve) => callbackServer.close(resolve)));
    const { port } = callbackServer.address() as AddressInfo;
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const provider = new RecordingProvider({ clientId: 'atelier-local-tools' }, redirectUri);
    const serverUrl = `${t.url}/mcp`;

    assert.equal(await auth(provider, { serverUrl }), 'REDIRECT');
    const started = provider.authorizationUrl!;
    assert.equal(started.searchParams.get('redirect_uri'), redirectUri);
    const sentBack = await authorizeInBrowser(new TestBrowser(t.url), t.url, started.href, {
      email,
      password: 'an sdk password',
    });
    // The browser follows the redirect to the client's listener, which reads the code there.
    const arrived = once(callbackServer, 'request') as Promise<[IncomingMessage]>;
    assert.equal((await fetch(sentBack)).status, 200);
    const [request] = await arrived;
    const callback = new URL(request.url!, redirectUri);
    assert.equal(callback.origin + callback.pathname, redirectUri);
    assert.equal(callback.searchParams.get('state'), started.searchParams.get('state'));
    assert.equal(
      await auth(provider, { serverUrl, authorizationCode: callback.searchParams.get('code')! }),
      'AUTHORIZED',
    );

    const principal = await t.app.oauth.tokens.verify(provider.tokens()!.access_token);
    assert.equal(principal.accountId, account.id);
    assert.equal(principal.clientId, 'atelier-local-tools');
  });
});
