import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import {
  authorizeInBrowser,
  authorizeUrl,
  codeExchangeFields,
  exchangeWithOauth4webapi,
  newPkce,
  signInBrowser,
  TestBrowser,
  tokenRequest,
} from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const clientId = 'atelier-local-tools';
const redirectUri = 'http://localhost:43123/oauth/callback';
const password = 'a password for oauth';

describeEachBackend(
  'the OAuth authorization server for MCP clients (spec §4.3, §4.4, §5.4)',
  (backend) => {
    let database: Database;
    let t: TestApp;
    let people = 0;
    before(async () => {
      database = await createTestDatabase(backend);
      t = await startTestApp(database);
    });
    after(async () => {
      await t.close();
      await database.close();
    });

    /** A person with an account, an API key and a built-in sign-in. */
    const person = async () => {
      const seeded = await seedAccount(t.app);
      const email = `person-${++people}@example.test`;
      await t.app.services.identityProvider!.addUser({
        accountId: seeded.account.id,
        email,
        password,
      });
      return { ...seeded, email, password };
    };
    const fullFlow = async (who: { email: string; password: string }, uri = redirectUri) => {
      const pkce = await newPkce();
      const browser = new TestBrowser(t.url);
      const callback = await authorizeInBrowser(
        browser,
        t.url,
        authorizeUrl(t.url, { clientId, redirectUri: uri, pkce }),
        who,
      );
      return { pkce, browser, callback };
    };

    it('publishes discovery: protected resource (both paths) and authorization server metadata', async () => {
      const resource = await (
        await fetch(`${t.url}/.well-known/oauth-protected-resource/mcp`)
      ).json();
      assert.deepEqual(
        await (await fetch(`${t.url}/.well-known/oauth-protected-resource`)).json(),
        resource,
      );
      assert.deepEqual(resource, {
        resource: `${t.url}/mcp`,
        authorization_servers: [t.url],
        scopes_supported: ['mcp:access'],
        bearer_methods_supported: ['header'],
        resource_name: 'Atelier',
      });
      const as = (await (
        await fetch(`${t.url}/.well-known/oauth-authorization-server`)
      ).json()) as Record<string, unknown>;
      assert.equal(as.issuer, t.url);
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(as.grant_types_supported, ['authorization_code']);
      assert.deepEqual(as.token_endpoint_auth_methods_supported, ['none']);
      assert.equal(as.client_id_metadata_document_supported, true);
      assert.equal(as.authorization_response_iss_parameter_supported, true);
      for (const absent of [
        'registration_endpoint',
        'introspection_endpoint',
        'revocation_endpoint',
      ])
        assert.equal(absent in as, false);
      for (const path of ['/oauth/register', '/oauth/introspect', '/oauth/revoke']) {
        assert.equal((await fetch(`${t.url}${path}`, { method: 'POST' })).status, 404, path);
      }
      const jwks = (await (await fetch(`${t.url}/oauth/jwks`)).json()) as {
        keys: Array<Record<string, unknown>>;
      };
      assert.ok(jwks.keys.length >= 1);
      for (const key of jwks.keys)
        for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(secret in key, false);
    });

    it('runs the whole flow with oauth4webapi: authorize → sign in → consent → code → a 7-day RS256 token', async () => {
      const who = await person();
      const { pkce, callback } = await fullFlow(who);
      assert.equal(callback.searchParams.get('state'), pkce.state);
      assert.equal(callback.searchParams.get('iss'), t.url);
      const tokens = await exchangeWithOauth4webapi(t.url, clientId, redirectUri, callback, pkce);
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.refresh_token, undefined, 'no refresh token (spec §5.4)');
      const header = decodeProtectedHeader(tokens.access_token);
      const claims = decodeJwt(tokens.access_token);
      assert.deepEqual([header.alg, header.typ], ['RS256', 'at+jwt']);
      assert.deepEqual(
        [claims.iss, claims.aud, claims.sub, claims.client_id, claims.scope],
        [t.url, `${t.url}/mcp`, who.account.id, clientId, 'mcp:access'],
      );
      assert.equal(claims.exp! - claims.iat!, 7 * 86_400);
      const principal = await t.app.oauth.tokens.verify(tokens.access_token);
      assert.deepEqual([principal.accountId, principal.clientId], [who.account.id, clientId]);
    });

    it('the connection is listed and revoked through GraphQL; the token then fails at once', async () => {
      const who = await person();
      const { pkce, callback } = await fullFlow(who);
      const { access_token: token } = await exchangeWithOauth4webapi(
        t.url,
        clientId,
        redirectUri,
        callback,
        pkce,
      );
      const listed = await graphql<{
        listPersonalMcpConnections: Array<{
          clientId: string;
          clientName: string;
          scopes: string[];
        }>;
      }>(t.url, {
        query:
          '{ listPersonalMcpConnections { clientId clientName scopes connectedAt lastUsedAt } }',
        apiKey: who.apiKey,
      });
      assert.deepEqual(
        listed.body.data?.listPersonalMcpConnections.map((c) => [
          c.clientId,
          c.clientName,
          c.scopes,
        ]),
        [[clientId, 'MCP Inspector and local tools', ['mcp:access']]],
      );
      await t.app.oauth.tokens.verify(token);
      const revoked = await graphql<{
        revokeMcpConnection: { clientId: string; revokedAt: string };
      }>(t.url, {
        query: 'mutation R($id: ID!) { revokeMcpConnection(clientId: $id) { clientId revokedAt } }',
        variables: { id: clientId },
        apiKey: who.apiKey,
      });
      assert.ok(revoked.body.data?.revokeMcpConnection.revokedAt);
      await assert.rejects(t.app.oauth.tokens.verify(token), {
        name: 'BearerError',
        error: 'invalid_token',
      });
      const again = await graphql(t.url, {
        query: 'mutation { revokeMcpConnection(clientId: "atelier-local-tools") { clientId } }',
        apiKey: who.apiKey,
      });
      assert.deepEqual(errorCodes(again), ['140004']);
    });

    it('listMcpClientInstructions is public and fits this server (local http)', async () => {
      const res = await graphql<{
        listMcpClientInstructions: Array<{
          clientName: string;
          serverUrl: string;
          available: boolean;
          clientId: string | null;
          callbackRule: string;
          configSnippet: string | null;
        }>;
      }>(t.url, {
        query:
          '{ listMcpClientInstructions { clientName serverUrl available clientId callbackRule instructions configSnippet docsUrl } }',
      });
      const byName = new Map(
        res.body.data!.listMcpClientInstructions.map((i) => [i.clientName, i]),
      );
      for (const name of [
        'Claude Code',
        'VS Code',
        'Cursor',
        'Claude Desktop',
        'ChatGPT and other web-hosted agents',
        'MCP Inspector',
        'Any other MCP client (and the MCP SDKs)',
      ]) {
        assert.equal(byName.get(name)?.serverUrl, `${t.url}/mcp`, name);
      }
      // This server is plain http on 127.0.0.1: agents on the internet cannot reach it.
      assert.equal(byName.get('ChatGPT and other web-hosted agents')!.available, false);
      assert.equal(byName.get('Claude Code')!.clientId, 'atelier-local-tools');
      assert.equal(
        byName.get('Claude Code')!.configSnippet,
        `claude mcp add --transport http --client-id atelier-local-tools atelier ${t.url}/mcp`,
      );
      assert.deepEqual(JSON.parse(byName.get('VS Code')!.configSnippet!), {
        servers: { atelier: { type: 'http', url: `${t.url}/mcp` } },
      });
    });

    it('a denied consent sends access_denied back, and no code', async () => {
      const who = await person();
      const pkce = await newPkce();
      const callback = await authorizeInBrowser(
        new TestBrowser(t.url),
        t.url,
        authorizeUrl(t.url, { clientId, redirectUri, pkce }),
        who,
        false,
      );
      assert.equal(callback.searchParams.get('error'), 'access_denied');
      assert.equal(callback.searchParams.get('code'), null);
      assert.equal(callback.searchParams.get('state'), pkce.state);
    });

    it('a code is single-use: a replay gets nothing and revokes the token the first use gave', async () => {
      const who = await person();
      const { pkce, callback } = await fullFlow(who);
      const fields = codeExchangeFields(t.url, clientId, redirectUri, callback, pkce);
      const first = await tokenRequest(t.url, fields);
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('cache-control'), 'no-store');
      const replay = await tokenRequest(t.url, fields);
      assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_grant']);
      assert.equal(replay.body.access_token, undefined);
      await assert.rejects(t.app.oauth.tokens.verify(first.body.access_token!), {
        error: 'invalid_token',
      });
    });

    it('twenty concurrent redemptions of one code give exactly one token', async () => {
      const who = await person();
      const { pkce, callback } = await fullFlow(who);
      const fields = codeExchangeFields(t.url, clientId, redirectUri, callback, pkce);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => tokenRequest(t.url, fields)),
      );
      assert.equal(results.filter((r) => r.status === 200).length, 1);
      assert.equal(results.filter((r) => r.body.error === 'invalid_grant').length, 19);
    });

    it('every binding of the code is checked at the token endpoint', async () => {
      const who = await person();
      const cases: Array<[string, (f: Record<string, string>) => Record<string, string>, string]> =
        [
          [
            'wrong PKCE verifier',
            (f) => ({ ...f, code_verifier: 'x'.repeat(43) }),
            'invalid_grant',
          ],
          [
            'another port of the same portless redirect',
            (f) => ({ ...f, redirect_uri: 'http://localhost:43124/oauth/callback' }),
            'invalid_grant',
          ],
          ['another client', (f) => ({ ...f, client_id: 'atelier-other' }), 'invalid_client'],
          ['another resource', (f) => ({ ...f, resource: `${t.url}/other` }), 'invalid_target'],
          ['a missing field', ({ code_verifier: _v, ...f }) => f, 'invalid_request'],
          ['a missing resource', ({ resource: _r, ...f }) => f, 'invalid_target'],
          [
            'another grant type',
            (f) => ({ ...f, grant_type: 'refresh_token' }),
            'unsupported_grant_type',
          ],
        ];
      for (const [label, change, expected] of cases) {
        const { pkce, callback } = await fullFlow(who);
        const fields = codeExchangeFields(t.url, clientId, redirectUri, callback, pkce);
        const res = await tokenRequest(t.url, change(fields));
        assert.equal(res.body.error, expected, label);
        assert.equal(res.body.access_token, undefined, label);
      }
    });

    it('refuses PKCE missing or plain, a wrong scope or resource — back at the redirect URI with the error', async () => {
      const pkce = await newPkce();
      const cases: Array<[string, Record<string, string>, string]> = [
        ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
        ['no PKCE', { code_challenge: '', code_challenge_method: '' }, 'invalid_request'],
        ['another scope', { scope: 'openid' }, 'invalid_scope'],
        // RFC 6749 §3.3: no scope, and no default scope, is invalid_scope too.
        ['no scope', { scope: '' }, 'invalid_scope'],
        ['an extra scope', { scope: 'mcp:access admin' }, 'invalid_scope'],
        ['another resource', { resource: `${t.url}/mcp/other` }, 'invalid_target'],
        ['a token response type', { response_type: 'token' }, 'unsupported_response_type'],
      ];
      for (const [label, extra, expected] of cases) {
        const url = new URL(authorizeUrl(t.url, { clientId, redirectUri, pkce, extra }));
        for (const [name, value] of Object.entries(extra))
          if (value === '') url.searchParams.delete(name);
        const res = await fetch(url, { redirect: 'manual' });
        assert.equal(res.status, 303, label);
        const back = new URL(res.headers.get('location')!);
        assert.equal(
          `${back.origin}${back.pathname}`,
          'http://localhost:43123/oauth/callback',
          label,
        );
        assert.equal(back.searchParams.get('error'), expected, label);
        assert.equal(back.searchParams.get('state'), pkce.state, label);
      }
    });

    it('redirect URI variations are shown an error page and never redirected to', async () => {
      const pkce = await newPkce();
      const variations = [
        'http://localhost:43123/oauth/callbackx',
        'http://localhost:43123/oauth',
        'http://localhost:43123/oauth/callback/more',
        'http://user@localhost:43123/oauth/callback',
        // The built-in client registers localhost, 127.0.0.1 and [::1]; no other loopback name.
        'http://127.0.0.2:43123/oauth/callback',
        'http://[0:0:0:0:0:0:0:1]:43123/oauth/callback',
        'http://127.0.0.1:43123/oauth/callbackx',
        'http://localhost:043123/oauth/callback',
        'http://localhost:70000/oauth/callback',
        'http://localhost:43123/oauth/callback?extra=1',
        'http://localhost:43123/oauth/callback#fragment',
        'https://localhost:43123/oauth/callback',
        'http://localhost.evil.example/oauth/callback',
        'https://evil.example/oauth/callback',
      ];
      for (const uri of variations) {
        const res = await fetch(authorizeUrl(t.url, { clientId, redirectUri: uri, pkce }), {
          redirect: 'manual',
        });
        assert.equal(res.status, 400, uri);
        assert.equal(res.headers.get('location'), null, uri);
        assert.match(await res.text(), /redirect_uri is not registered/, uri);
      }
      for (const [label, url] of [
        ['unknown client', authorizeUrl(t.url, { clientId: 'who-knows', redirectUri, pkce })],
        ['no client', authorizeUrl(t.url, { clientId: '', redirectUri, pkce })],
      ] as const) {
        const res = await fetch(url, { redirect: 'manual' });
        assert.equal(res.status, 400, label);
        assert.equal(res.headers.get('location'), null, label);
      }
    });

    it('a portless localhost registration accepts any canonical port, and the code stays bound to it', async () => {
      const who = await person();
      for (const uri of [
        'http://localhost:1/oauth/callback',
        'http://localhost:65535/oauth/callback',
        'http://localhost/oauth/callback',
      ]) {
        const { pkce, callback } = await fullFlow(who, uri);
        assert.equal(
          `${callback.origin}${callback.pathname}`,
          new URL(uri).href.replace(/\/$/, ''),
          uri,
        );
        const res = await tokenRequest(
          t.url,
          codeExchangeFields(t.url, clientId, uri, callback, pkce),
        );
        assert.equal(res.status, 200, uri);
      }
    });

    it('session fixation: signing in replaces the session id; the old one is worthless', async () => {
      const who = await person();
      const browser = new TestBrowser(t.url);
      await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }));
      const [name, before] = [...browser.cookies][0]!;
      assert.match(name!, /atelier_session$/);
      await signInBrowser(browser, t.url, who.email, who.password);
      assert.notEqual(browser.cookies.get(name!), before);
      const stale = await fetch(`${t.url}/auth/session`, {
        headers: { cookie: `${name}=${before}` },
      });
      assert.equal(stale.status, 401);
      const fresh = await browser.request(`${t.url}/auth/session`);
      assert.equal(fresh.status, 200);
      assert.equal(fresh.headers.get('cache-control'), 'no-store');
      const body = (await fresh.json()) as {
        authenticated: boolean;
        csrf: { headerName: string; token: string };
      };
      assert.equal(body.authenticated, true);
      assert.equal(body.csrf.headerName, 'x-csrf-token');
    });

    it('POST /auth/session needs exactly {id_token}, a pending authorization and this server’s Origin', async () => {
      const who = await person();
      const { idToken } = (await (
        await fetch(`${t.url}/idp/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: who.email, password }),
        })
      ).json()) as { idToken: string };
      const post = (browser: TestBrowser, body: unknown, origin?: string | null) =>
        browser.request(`${t.url}/auth/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          ...(origin === undefined ? {} : { origin }),
        });
      const noPending = new TestBrowser(t.url);
      assert.equal((await post(noPending, { id_token: idToken })).status, 400);
      const browser = new TestBrowser(t.url);
      await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }));
      assert.equal((await post(browser, { id_token: idToken, extra: 1 })).status, 400);
      assert.equal(
        (await post(browser, { id_token: idToken }, 'https://evil.example')).status,
        403,
      );
      assert.equal((await post(browser, { id_token: idToken }, null)).status, 403);
      assert.equal((await post(browser, { id_token: 'not-a-token' })).status, 401);
      assert.equal((await post(browser, { id_token: idToken })).status, 204);
      assert.equal((await browser.request(`${t.url}/auth/session`)).status, 200);
    });

    it('DELETE /auth/session needs the CSRF token and this Origin; the session then ends', async () => {
      const who = await person();
      const browser = new TestBrowser(t.url);
      await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }));
      await signInBrowser(browser, t.url, who.email, who.password);
      const { csrf } = (await (await browser.request(`${t.url}/auth/session`)).json()) as {
        csrf: { token: string };
      };
      assert.equal(
        (await browser.request(`${t.url}/auth/session`, { method: 'DELETE' })).status,
        403,
      );
      assert.equal(
        (
          await browser.request(`${t.url}/auth/session`, {
            method: 'DELETE',
            headers: { 'x-csrf-token': csrf.token },
            origin: 'https://evil.example',
          })
        ).status,
        403,
      );
      assert.equal(
        (
          await browser.request(`${t.url}/auth/session`, {
            method: 'DELETE',
            headers: { 'x-csrf-token': csrf.token },
          })
        ).status,
        204,
      );
      assert.equal((await browser.request(`${t.url}/auth/session`)).status, 401);
    });

    it('consent needs the right CSRF token, this Origin, and the pending request of this very session', async () => {
      const alice = await person();
      const bob = await person();
      const aliceBrowser = new TestBrowser(t.url);
      await aliceBrowser.request(
        authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }),
      );
      await signInBrowser(aliceBrowser, t.url, alice.email, alice.password);
      const resumed = new URL(
        (await aliceBrowser.request(`${t.url}/oauth/authorize`)).headers.get('location')!,
        t.url,
      );
      const { form } = (await (
        await aliceBrowser.request(`${t.url}/oauth/consent/context${resumed.search}`)
      ).json()) as { form: Record<string, string> };
      const decide = (browser: TestBrowser, fields: Record<string, string>, origin?: string) =>
        browser.request(`${t.url}/oauth/authorize`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields),
          ...(origin ? { origin } : {}),
        });
      const approve = { client_id: form.clientId!, state: form.state!, scope: form.approveScope! };

      assert.equal((await decide(aliceBrowser, approve)).status, 403, 'no CSRF token');
      assert.equal(
        (await decide(aliceBrowser, { ...approve, csrf_token: 'forged' })).status,
        403,
        'wrong CSRF token',
      );
      assert.equal(
        (
          await decide(
            aliceBrowser,
            { ...approve, csrf_token: form.csrfToken! },
            'https://evil.example',
          )
        ).status,
        403,
        'foreign Origin',
      );
      // Bob, signed in in his own browser, cannot decide Alice's pending authorization.
      const bobBrowser = new TestBrowser(t.url);
      await bobBrowser.request(
        authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }),
      );
      await signInBrowser(bobBrowser, t.url, bob.email, bob.password);
      const { csrf } = (await (await bobBrowser.request(`${t.url}/auth/session`)).json()) as {
        csrf: { token: string };
      };
      // Answered exactly like a request that never existed: the same 404 and the same words.
      const unknown = { client_id: clientId, state: 'never-issued' };
      const answers = await Promise.all(
        [
          decide(bobBrowser, { ...approve, csrf_token: csrf.token }),
          decide(bobBrowser, { ...approve, ...unknown, csrf_token: csrf.token }),
        ].map(async (r) => [(await r).status, await (await r).text()]),
      );
      assert.equal(answers[0]![0], 404, "another user's pending request");
      assert.deepEqual(answers[0], answers[1]);
      const contexts = await Promise.all(
        [resumed.search, `?${new URLSearchParams({ ...unknown, scope: 'mcp:access' })}`].map(
          async (query) => {
            const r = await bobBrowser.request(`${t.url}/oauth/consent/context${query}`);
            return [r.status, await r.json()];
          },
        ),
      );
      assert.equal(contexts[0]![0], 404);
      assert.deepEqual(contexts[0], contexts[1]);
      // Alice still can.
      const ok = await decide(aliceBrowser, { ...approve, csrf_token: form.csrfToken! });
      assert.equal(ok.status, 303);
      assert.ok(new URL(ok.headers.get('location')!).searchParams.get('code'));
    });

    it('a browser session ends after 30 minutes without activity (spec §8)', async () => {
      const who = await person();
      const browser = new TestBrowser(t.url);
      await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }));
      await signInBrowser(browser, t.url, who.email, who.password);
      await database.db
        .updateTable('browser_sessions')
        .set({ last_active_at: new Date(Date.now() - 29 * 60_000) })
        .execute();
      assert.equal(
        (await browser.request(`${t.url}/auth/session`)).status,
        200,
        'active within 30 minutes, and touched',
      );
      await database.db
        .updateTable('browser_sessions')
        .set({ last_active_at: new Date(Date.now() - 31 * 60_000) })
        .execute();
      assert.equal((await browser.request(`${t.url}/auth/session`)).status, 401);
    });

    it('an expired pending authorization cannot be resumed or consented', async () => {
      const who = await person();
      const browser = new TestBrowser(t.url);
      await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }));
      await signInBrowser(browser, t.url, who.email, who.password);
      await database.db
        .updateTable('pending_authorizations')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .execute();
      const resumed = await browser.request(`${t.url}/oauth/authorize`);
      assert.equal(resumed.status, 400);
      assert.match(await resumed.text(), /expired/);
    });

    it('a browser session cookie never authenticates /graphql, and is HttpOnly', async () => {
      const who = await person();
      const browser = new TestBrowser(t.url);
      await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }));
      await signInBrowser(browser, t.url, who.email, who.password);
      const res = await browser.request(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ getUserByPrivateId { id } }' }),
      });
      const body = (await res.json()) as { errors?: Array<{ extensions: { code: string } }> };
      assert.equal(body.errors?.[0]?.extensions.code, '100101');
      const setCookie = (
        await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce: await newPkce() }))
      ).headers.getSetCookie();
      for (const line of setCookie) assert.match(line, /HttpOnly/i);
    });
  },
);
