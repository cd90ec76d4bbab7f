import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { generateApiKey } from '../../../src/auth/api-key.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase, resetDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

const me = '{ getUserByPrivateId { id alias creditBalances { category amount } } }';
type Me = { getUserByPrivateId: { id: string } | null };

describeEachBackend('credentials on /graphql (spec §5.1)', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    // A second category, for an account holding two (a category exists once named here).
    t = await startTestApp(database, { env: { CREDIT_CATEGORIES: 'standard,video' } });
  });
  beforeEach(() => resetDatabase(database));
  after(async () => {
    await t.close();
    await database.close();
  });

  it('an API key owns the call: getUserByPrivateId returns its account', async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 250, video: 7 } });
    const res = await graphql(t.url, { query: me, apiKey });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      data: {
        getUserByPrivateId: {
          id: account.id,
          alias: account.alias,
          creditBalances: [
            { category: 'standard', amount: 250 },
            { category: 'video', amount: 7 },
          ],
        },
      },
    });
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('no credential: HTTP 200, the protected field is null with 100101, public fields answer', async () => {
    const res = await graphql(t.url, { query: `{ __typename ${me.slice(1)}` });
    assert.equal(res.status, 200);
    assert.equal(res.body.data?.__typename, 'Query');
    assert.equal(res.body.data?.getUserByPrivateId, null);
    assert.deepEqual(errorCodes(res), ['100101']);
    assert.deepEqual(res.body.errors?.[0]?.path, ['getUserByPrivateId']);
    assert.equal(res.body.errors?.[0]?.extensions?.retryable, false);
  });

  for (const [label, header] of [
    ['malformed', 'Bearer svc_short'],
    ['wrong checksum', 'Bearer svc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['not a Bearer header', 'Basic dXNlcjpwYXNz'],
    ['a JWT (an MCP token is not an API key)', 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
    ['an empty Bearer', 'Bearer '],
  ] as const) {
    it(`an invalid key (${label}) is refused with 401 before execution`, async () => {
      const res = await graphql(t.url, {
        query: `{ __typename ${me.slice(1)}`,
        headers: { authorization: header },
      });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
      assert.equal(res.body.data, null, 'nothing executed, not even __typename');
      assert.deepEqual(errorCodes(res), ['100101']);
      assert.equal(typeof res.body.errors?.[0]?.extensions?.requestId, 'string');
    });
  }

  it('an unknown but well-formed key gets 401', async () => {
    const { apiKey } = await seedAccount(t.app);
    // Same shape and checksum scheme, but a key that was never issued.
    const res = await graphql(t.url, { query: me, apiKey: generateApiKey().secret });
    assert.equal(res.status, 401);
    assert.equal((await graphql(t.url, { query: me, apiKey })).status, 200);
  });

  it('a key takes precedence over an ID token sent with it', async () => {
    const { account, apiKey } = await seedAccount(t.app);
    const res = await graphql<Me>(t.url, {
      query: me,
      apiKey,
      headers: { 'x-idp-token': 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJvdGhlciJ9.c2ln' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.data?.getUserByPrivateId?.id, account.id);
  });

  it('an invalid key is never rescued by an ID token', async () => {
    const res = await graphql(t.url, {
      query: me,
      headers: { authorization: 'Bearer svc_nope', 'x-idp-token': 'anything' },
    });
    assert.equal(res.status, 401);
    assert.deepEqual(errorCodes(res), ['100101']);
  });

  it('an invalid ID token alone is refused with HTTP 401 before execution', async () => {
    const res = await graphql(t.url, { query: me, headers: { 'x-idp-token': 'not-a-token' } });
    assert.equal(res.status, 401);
    assert.deepEqual(errorCodes(res), ['100101']);
  });

  it('a suspended account: 100101; a deleted one: 110206; reactivated: works again', async () => {
    const { account, apiKey } = await seedAccount(t.app);
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey })), [], 'key now cached');
    await t.app.services.accounts.update(account.id, { status: 'suspended' });
    const suspended = await graphql(t.url, { query: me, apiKey });
    assert.equal(suspended.status, 200);
    assert.deepEqual(errorCodes(suspended), ['100101']);

    await t.app.services.accounts.update(account.id, { status: 'deleted' });
    const deleted = await graphql(t.url, { query: me, apiKey });
    assert.deepEqual(errorCodes(deleted), ['110206']);
    assert.equal(deleted.body.data?.getUserByPrivateId, null);

    await t.app.services.accounts.update(account.id, { status: 'active' });
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey })), []);
  });

  it('one account never sees another: each key reads only its own account', async () => {
    const a = await seedAccount(t.app, { credits: { standard: 1 } });
    const b = await seedAccount(t.app, { credits: { standard: 2 } });
    const resA = await graphql<Me>(t.url, { query: me, apiKey: a.apiKey });
    const resB = await graphql<Me>(t.url, { query: me, apiKey: b.apiKey });
    assert.equal(resA.body.data?.getUserByPrivateId?.id, a.account.id);
    assert.equal(resB.body.data?.getUserByPrivateId?.id, b.account.id);
  });
});
