import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { documentHost } from '../../helpers/metadata-documents.ts';
import {
  authorizeInBrowser,
  authorizeUrl,
  codeExchangeFields,
  newPkce,
  signInBrowser,
  TestBrowser,
  tokenRequest,
} from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const configuredClient = 'atelier-local-tools';
const loopbackCallback = 'http://localhost:43300/oauth/callback';
const httpsCallback = 'https://agent.example/oauth/callback';

/** Client ID Metadata Documents: an honest agent, a namesake of it, and an impersonator. */
const agentDocuments: Record<string, string> = {
  '/agent.json': 'Helpful Agent',
  '/namesake.json': 'Helpful Agent',
  '/impostor.json': '  mcp inspector AND Local   tools ',
  // Invisible characters do not make a trusted name a new one.
  '/native.json': 'MCP Inspector and local\u200b tools\u202e',
};
const appCallback = 'com.example.agent:/oauth/callback';

describeEachBackend('the authorization endpoint and the consent page (issue 15)', (backend) => {
  let database: Database;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let t: TestApp;
  let people = 0;
  before(async () => {
    database = await createTestDatabase(backend);
    host = await documentHost();
    for (const [path, name] of Object.entries(agentDocuments)) {
      host.serveJson(path, (self) => ({
        client_id: self,
        client_name: name,
        redirect_uris: ['http://localhost/oauth/callback', httpsCallback, appCallback],
        token_endpoint_auth_method: 'none',
      }));
    }
    t = await startTestApp(database, { cimdFetch: host.publicNetwork });
  });
  after(async () => {
    await t.close();
    await host.close();
    await database.close();
  });

  const person = async () => {
    const { account } = await seedAccount(t.app);
    const who = { email: `consent-${++people}@example.test`, password: 'a consent password' };
    await t.app.services.identityProvider!.addUser({ accountId: account.id, ...who });
    return { account, ...who };
  };

  /** A browser signed in with a pending authorization of `clientId`, and its consent context. */
  const consentContext = async (clientId: string, redirectUri = loopbackCallback) => {
    const who = await person();
    const browser = new TestBrowser(t.url);
    const pkce = await newPkce();
    const started = await browser.request(authorizeUrl(t.url, { clientId, redirectUri, pkce }));
    assert.equal(started.headers.get('location'), '/login?next=authorize');
    await signInBrowser(browser, t.url, who.email, who.password);
    const resumed = await browser.request(`${t.url}/oauth/authorize`);
    const consent = new URL(resumed.headers.get('location')!, t.url);
    const response = await browser.request(`${t.url}/oauth/consent/context${consent.search}`);
    assert.equal(response.status, 200);
    return (await response.json()) as {
      client: Record<string, unknown>;
      notices: Array<{ kind: string; severity: string; message: string }>;
    };
  };

  it("a metadata-document client's errors are shown on Atelier's page, never redirected", async () => {
    const pkce = await newPkce();
    const cases: Array<[string, Record<string, string | null>]> = [
      ['another scope', { scope: 'openid' }],
      ['a token response type', { response_type: 'token' }],
      ['plain PKCE', { code_challenge_method: 'plain' }],
      ['no resource', { resource: null }],
      ['no state', { state: null }],
    ];
    for (const [label, changes] of cases) {
      for (const clientId of [configuredClient, `${host.base}/agent.json`]) {
        const url = new URL(authorizeUrl(t.url, { clientId, redirectUri: loopbackCallback, pkce }));
        for (const [name, value] of Object.entries(changes))
          if (value === null) url.searchParams.delete(name);
          else url.searchParams.set(name, value);
        const res = await fetch(url, { redirect: 'manual' });
        if (clientId === configuredClient) {
          assert.equal(res.status, 303, `${label}: a configured client gets the error back`);
          assert.ok(res.headers.get('location')!.startsWith(loopbackCallback), label);
        } else {
          assert.equal(res.status, 400, `${label}: shown`);
          assert.equal(res.headers.get('location'), null, `${label}: not redirected`);
          assert.match(res.headers.get('content-type')!, /^text\/html/);
          assert.match(await res.text(), /data-testid="error"/);
        }
      }
    }
  });

  it('consent context of a configured client: verified, and a loopback callback said plainly', async () => {
    const { client, notices } = await consentContext(configuredClient);
    assert.deepEqual(client, {
      client_id: configuredClient,
      client_name: 'MCP Inspector and local tools',
      client_uri: null,
      logo_uri: null,
      verified: true,
      client_id_host: null,
      redirect_host: 'localhost:43300',
      loopback_redirect: true,
    });
    assert.deepEqual(
      notices.map((n) => n.kind),
      ['loopback-redirect'],
    );
  });

  it('consent context of a metadata-document client: its host, not verified, and where the browser goes', async () => {
    const clientId = `${host.base}/agent.json`;
    const { client, notices } = await consentContext(clientId, httpsCallback);
    assert.equal(client.verified, false);
    assert.equal(client.client_id, clientId);
    assert.equal(client.client_id_host, new URL(host.base).host);
    assert.equal(client.redirect_host, 'agent.example');
    assert.equal(client.loopback_redirect, false);
    assert.deepEqual(
      notices.map((n) => [n.kind, n.severity]),
      [['unverified-client', 'warning']],
    );
    assert.match(notices[0]!.message, new RegExp(new URL(host.base).host));

    const namesake = await consentContext(`${host.base}/namesake.json`);
    assert.equal(namesake.client.client_name, client.client_name);
    assert.notEqual(namesake.client.client_id, client.client_id, 'one name, told apart');
    assert.ok(namesake.notices.some((n) => n.kind === 'loopback-redirect'));
  });

  it("a metadata-document client using a configured client's name is called out", async () => {
    const { client, notices } = await consentContext(`${host.base}/impostor.json`);
    assert.equal(client.verified, false);
    assert.deepEqual(
      notices.map((n) => n.kind),
      ['impersonation', 'unverified-client', 'loopback-redirect'],
    );
    assert.equal(notices[0]!.severity, 'warning');
  });

  it("a native app's scheme callback is named, with a warning; invisible characters hide no name", async () => {
    const { client, notices } = await consentContext(`${host.base}/native.json`, appCallback);
    assert.equal(client.redirect_host, 'com.example.agent:');
    assert.equal(client.loopback_redirect, false);
    assert.deepEqual(
      notices.map((n) => [n.kind, n.severity]),
      [
        ['impersonation', 'warning'],
        ['unverified-client', 'warning'],
        ['app-redirect', 'warning'],
      ],
    );
    assert.match(notices[2]!.message, /com\.example\.agent:/);
  });

  it('POST /auth/session from a signed-in browser is 409 and the browser keeps its identity', async () => {
    const alice = await person();
    const bob = await person();
    const browser = new TestBrowser(t.url);
    const pkce = await newPkce();
    const url = authorizeUrl(t.url, {
      clientId: configuredClient,
      redirectUri: loopbackCallback,
      pkce,
    });
    await browser.request(url);
    await signInBrowser(browser, t.url, alice.email, alice.password);
    const cookiesBefore = new Map(browser.cookies);
    const signIn = await fetch(`${t.url}/idp/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: bob.email, password: bob.password }),
    });
    const { idToken } = (await signIn.json()) as { idToken: string };
    const again = await browser.request(`${t.url}/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id_token: idToken }),
    });
    assert.equal(again.status, 409);
    assert.deepEqual(browser.cookies, cookiesBefore, 'no new session cookie');
    // The authorization goes on as Alice: the token speaks for her account.
    const callback = await authorizeInBrowser(browser, t.url, url, alice);
    const token = await tokenRequest(
      t.url,
      codeExchangeFields(t.url, configuredClient, loopbackCallback, callback, pkce),
    );
    const principal = await t.app.oauth.tokens.verify(token.body.access_token!);
    assert.equal(principal.accountId, alice.account.id);
  });

  it('expired sessions, pending authorizations, codes and tokens are swept; live ones stay', async () => {
    const live = new TestBrowser(t.url);
    await live.request(
      authorizeUrl(t.url, {
        clientId: configuredClient,
        redirectUri: loopbackCallback,
        pkce: await newPkce(),
      }),
    );
    const stale = new TestBrowser(t.url);
    await stale.request(
      authorizeUrl(t.url, {
        clientId: configuredClient,
        redirectUri: loopbackCallback,
        pkce: await newPkce(),
      }),
    );
    const staleHash = (
      await database.db
        .selectFrom('browser_sessions')
        .select('id_hash')
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow()
    ).id_hash;
    const hourAgo = new Date(Date.now() - 3_600_000);
    await database.db
      .updateTable('browser_sessions')
      .set({ last_active_at: hourAgo })
      .where('id_hash', '=', staleHash)
      .execute();
    const deleted = await t.app.oauth.sessions.sweepExpired();
    assert.ok(deleted.sessions >= 1, JSON.stringify(deleted));
    const left = await database.db.selectFrom('browser_sessions').select('id_hash').execute();
    assert.ok(!left.some((r) => r.id_hash === staleHash), 'the idle session is gone');
    assert.equal(
      (
        await database.db
          .selectFrom('pending_authorizations')
          .select('session_hash')
          .where('session_hash', '=', staleHash)
          .execute()
      ).length,
      0,
      'and its pending authorization',
    );
    // The live browser carries on.
    assert.equal((await live.request(`${t.url}/oauth/authorize`)).status, 303);
    assert.equal((await stale.request(`${t.url}/oauth/authorize`)).status, 400);
  });

  it('expired codes are swept, but a used one stays while its token lives: a late replay still revokes', async () => {
    const who = await person();
    const codeOf = async () => {
      const pkce = await newPkce();
      const url = authorizeUrl(t.url, {
        clientId: configuredClient,
        redirectUri: loopbackCallback,
        pkce,
      });
      const callback = await authorizeInBrowser(new TestBrowser(t.url), t.url, url, who);
      return codeExchangeFields(t.url, configuredClient, loopbackCallback, callback, pkce);
    };
    const unused = await codeOf();
    const used = await codeOf();
    const token = await tokenRequest(t.url, used);
    assert.equal(token.status, 200);
    await database.db
      .updateTable('oauth_codes')
      .set({ expires_at: sql`now() - interval '1 hour'` })
      .where('account_id', '=', who.account.id)
      .execute();
    const codesLeft = () =>
      database.db
        .selectFrom('oauth_codes')
        .select('used_at')
        .where('account_id', '=', who.account.id)
        .execute();

    await t.app.oauth.sessions.sweepExpired();
    const left = await codesLeft();
    assert.equal(left.length, 1, 'the unused expired code is gone');
    assert.notEqual(left[0]!.used_at, null, 'the used one stays');
    assert.equal((await tokenRequest(t.url, unused)).body.error, 'invalid_grant');
    const lateReplay = await tokenRequest(t.url, used);
    assert.equal(lateReplay.body.error, 'invalid_grant');
    await assert.rejects(t.app.oauth.tokens.verify(token.body.access_token!), {
      error: 'invalid_token',
    });

    // Once the token it gave has expired too, the used code goes.
    await database.db
      .updateTable('oauth_codes')
      .set({ used_at: sql`now() - interval '8 days'` })
      .where('account_id', '=', who.account.id)
      .execute();
    await t.app.oauth.sessions.sweepExpired();
    assert.equal((await codesLeft()).length, 0);
  });

  it('a session ends 12 hours after it began, however active', async () => {
    const who = await person();
    const browser = new TestBrowser(t.url);
    await browser.request(
      authorizeUrl(t.url, {
        clientId: configuredClient,
        redirectUri: loopbackCallback,
        pkce: await newPkce(),
      }),
    );
    await signInBrowser(browser, t.url, who.email, who.password);
    const setCreated = (hoursAgo: number) =>
      database.db
        .updateTable('browser_sessions')
        .set({ created_at: sql`now() - ${hoursAgo * 3600} * interval '1 second'` })
        .where('account_id', '=', who.account.id)
        .execute();
    await setCreated(11.9);
    assert.equal((await browser.request(`${t.url}/auth/session`)).status, 200);
    await setCreated(12.1);
    assert.equal((await browser.request(`${t.url}/auth/session`)).status, 401);
  });
});

describe('GET /oauth/authorize is rate limited per IP, and the session lifetime is configurable', () => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: { RATE_LIMIT_AUTH_PER_WINDOW: '5', BROWSER_SESSION_MAX_AGE_SECONDS: '3600' },
    });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('BROWSER_SESSION_MAX_AGE_SECONDS bounds a session however active', async () => {
    const browser = new TestBrowser(t.url);
    const url = authorizeUrl(t.url, {
      clientId: configuredClient,
      redirectUri: loopbackCallback,
      pkce: await newPkce(),
    });
    assert.equal((await browser.request(url)).status, 303);
    const began = (minutesAgo: number) =>
      database.db
        .updateTable('browser_sessions')
        .set({ created_at: sql`now() - ${minutesAgo * 60} * interval '1 second'` })
        .execute();
    await began(59);
    assert.equal((await browser.request(`${t.url}/oauth/authorize`)).status, 303);
    await began(61);
    assert.equal((await browser.request(`${t.url}/oauth/authorize`)).status, 400);
    assert.equal((await t.app.oauth.sessions.sweepExpired()).sessions, 1);
  });

  it('past the limit, cookie-less requests get 429 and write nothing', async () => {
    const pkce = await newPkce();
    const url = authorizeUrl(t.url, {
      clientId: configuredClient,
      redirectUri: loopbackCallback,
      pkce,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(url, { redirect: 'manual' })).status);
    // Three of the five were spent by the test above.
    assert.deepEqual(statuses, [303, 303, 429, 429, 429]);
    const sessions = await database.db.selectFrom('browser_sessions').selectAll().execute();
    assert.equal(sessions.length, 2);
  });
});
