import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { postMcp } from '../../helpers/mcp.ts';
import {
  authorizedCallback,
  authorizeUrl,
  codeExchangeFields,
  newPkce,
  tokenRequest,
} from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const clientId = 'atelier-local-tools';
const redirectUri = 'http://localhost:43200/oauth/callback';
/** A second configured client, registered for the very same callback. */
const otherClient = {
  client_id: 'other-app',
  client_name: 'Other App',
  redirect_uris: ['http://localhost/oauth/callback'],
};

/** What a `/mcp` request with this bearer token is answered: 200, or 401 when refused. */
async function mcpStatus(base: string, token: string): Promise<number> {
  const response = await postMcp(base, { authorization: `Bearer ${token}` }, 'ping');
  await response.body?.cancel();
  return response.status;
}

describeEachBackend('the token endpoint binds codes to their client (issue 15)', (backend) => {
  let database: Database;
  let t: TestApp;
  let people = 0;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, { env: { OAUTH_CLIENTS: JSON.stringify([otherClient]) } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  /** A fresh code of a signed-in person, and the fields its own client exchanges it with. */
  const freshCode = async () => {
    const { account } = await seedAccount(t.app);
    const { callback, pkce } = await authorizedCallback(t, {
      accountId: account.id,
      who: { email: `token-${++people}@example.test`, password: 'a token password' },
      clientId,
      redirectUri,
    });
    return codeExchangeFields(t.url, clientId, redirectUri, callback, pkce);
  };

  /** Requests that do not prove to be the code's client, given its correct fields. */
  const impostors = (fields: Record<string, string>): Array<[string, Record<string, string>]> => [
    ['a wrong verifier', { ...fields, code_verifier: 'x'.repeat(43) }],
    ['a malformed verifier', { ...fields, code_verifier: 'short' }],
    ["another configured client's ID", { ...fields, client_id: otherClient.client_id }],
    [
      'another port of the callback',
      { ...fields, redirect_uri: 'http://localhost:43201/oauth/callback' },
    ],
  ];

  it('a request with wrong bindings gets invalid_grant and leaves a fresh code usable', async () => {
    const fields = await freshCode();
    for (const [label, forged] of impostors(fields)) {
      const res = await tokenRequest(t.url, forged);
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_grant'], label);
      assert.equal(res.body.access_token, undefined, label);
    }
    const legit = await tokenRequest(t.url, fields);
    assert.equal(legit.status, 200, JSON.stringify(legit.body));
    assert.equal(await mcpStatus(t.url, legit.body.access_token!), 200);
  });

  it("a replay with wrong bindings changes nothing: the legitimate client's token lives on", async () => {
    const fields = await freshCode();
    const legit = await tokenRequest(t.url, fields);
    assert.equal(legit.status, 200);
    for (const [label, forged] of impostors(fields)) {
      const res = await tokenRequest(t.url, forged);
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_grant'], label);
      assert.equal(await mcpStatus(t.url, legit.body.access_token!), 200, label);
    }
    // The client itself replaying its code is the theft signal: then the token goes.
    const replay = await tokenRequest(t.url, fields);
    assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_grant']);
    assert.equal(await mcpStatus(t.url, legit.body.access_token!), 401);
  });

  it('a valid replay racing the first redemption always revokes the token it gave', async () => {
    for (let round = 0; round < 8; round++) {
      const fields = await freshCode();
      const results = await Promise.all([tokenRequest(t.url, fields), tokenRequest(t.url, fields)]);
      const issued = results.filter((r) => r.status === 200);
      assert.equal(issued.length, 1, `round ${round}: exactly one redemption wins`);
      assert.equal(
        await mcpStatus(t.url, issued[0]!.body.access_token!),
        401,
        `round ${round}: the winner's token is revoked by the replay`,
      );
    }
  });

  it('a code its connection was revoked before being exchanged says so, not "already used"', async () => {
    // Issue 30 §6: revokeMcpConnection ended the unused code by marking it used, so the client
    // was told the code had been used, which it had not.
    const { account, apiKey } = await seedAccount(t.app);
    const { callback, pkce } = await authorizedCallback(t, {
      accountId: account.id,
      who: { email: `token-${++people}@example.test`, password: 'a token password' },
      clientId,
      redirectUri,
    });
    const revoked = await graphql(t.url, {
      query: `mutation { revokeMcpConnection(clientId: "${clientId}") { clientId revokedAt } }`,
      apiKey,
    });
    assert.deepEqual(errorCodes(revoked), []);
    const res = await tokenRequest(
      t.url,
      codeExchangeFields(t.url, clientId, redirectUri, callback, pkce),
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
    assert.match(
      String(res.body.error_description),
      /connection was revoked before this code was exchanged/,
    );
    assert.doesNotMatch(String(res.body.error_description), /already used/);
    assert.equal(res.body.access_token, undefined);
  });

  it('grant_type is checked before anything else', async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['password', { grant_type: 'password', username: 'a', password: 'b' }],
      ['client_credentials', { grant_type: 'client_credentials', client_id: clientId }],
      ['refresh_token', { grant_type: 'refresh_token', refresh_token: 'r', resource: 'x' }],
      ['another grant with every code field', { ...(await freshCode()), grant_type: 'implicit' }],
    ];
    for (const [label, form] of cases) {
      const res = await tokenRequest(t.url, form);
      assert.deepEqual([res.status, res.body.error], [400, 'unsupported_grant_type'], label);
    }
    const none = await tokenRequest(t.url, { client_id: clientId });
    assert.deepEqual([none.status, none.body.error], [400, 'invalid_request']);
  });

  it('a missing or unknown resource is invalid_target, at the token endpoint and at authorize', async () => {
    const fields = await freshCode();
    const { resource: _resource, ...withoutResource } = fields;
    for (const [label, form] of [
      ['missing', withoutResource],
      ['unknown', { ...fields, resource: `${t.url}/mcp/other` }],
      ['another server', { ...fields, resource: 'https://elsewhere.example/mcp' }],
    ] as const) {
      const res = await tokenRequest(t.url, form);
      assert.deepEqual([res.status, res.body.error], [400, 'invalid_target'], label);
    }
    assert.equal((await tokenRequest(t.url, fields)).status, 200, 'the code was left unused');

    const pkce = await newPkce();
    const url = new URL(authorizeUrl(t.url, { clientId, redirectUri, pkce }));
    url.searchParams.delete('resource');
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.status, 303);
    const back = new URL(res.headers.get('location')!);
    assert.equal(back.searchParams.get('error'), 'invalid_target');
    assert.equal(back.searchParams.get('state'), pkce.state);
  });

  it('an access token whose aud is not exactly the resource, or whose iat is in the future, is refused', async () => {
    const legit = await tokenRequest(t.url, await freshCode());
    const claims = decodeJwt(legit.body.access_token!);
    const resource = `${t.url}/mcp`;
    const now = Math.floor(Date.now() / 1000);
    // Tokens signed with the server's own key, so only the claim under test differs.
    const resign = (changes: Record<string, unknown>) => {
      const { key, kid } = t.app.oauth.keys.signingKey;
      return new SignJWT({ ...claims, ...changes })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
        .sign(key);
    };
    const accepted: Array<[string, Record<string, unknown>]> = [
      ['the same claims', {}],
      ['aud as a one-element array', { aud: [resource] }],
      ['iat a few seconds ahead (clock skew)', { iat: now + 10 }],
    ];
    for (const [label, changes] of accepted)
      assert.equal(await mcpStatus(t.url, await resign(changes)), 200, label);
    const refused: Array<[string, Record<string, unknown>]> = [
      ['aud with another audience after it', { aud: [resource, 'https://other.example'] }],
      ['aud with another audience before it', { aud: ['https://other.example', resource] }],
      ['aud another resource', { aud: `${t.url}/mcp/other` }],
      ['iat an hour ahead', { iat: now + 3600 }],
      ['no iat', { iat: undefined }],
    ];
    for (const [label, changes] of refused)
      assert.equal(await mcpStatus(t.url, await resign(changes)), 401, label);
  });
});
