import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase, resetDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

const createKey = `mutation Create($input: CreateApiKeyInput!) {
  createApiKey(input: $input) {
    secret
    apiKey { id name prefix createdAt expiresAt revokedAt lastUsedAt }
  }
}`;
const listKeys = '{ listApiKeys { id name prefix createdAt expiresAt revokedAt lastUsedAt } }';
const revokeKey = `mutation Revoke($id: ID!) { revokeApiKey(apiKeyId: $id) { id revokedAt } }`;
const me = '{ getUserByPrivateId { id } }';

interface Created {
  createApiKey: {
    secret: string;
    apiKey: { id: string; name: string; prefix: string; expiresAt: string | null };
  };
}

describeEachBackend(
  'API keys (spec §5.1; contract createApiKey, listApiKeys, revokeApiKey)',
  (backend) => {
    let database: Database;
    let t: TestApp;
    const clock = new TestClock();
    before(async () => {
      database = await createTestDatabase(backend);
      t = await startTestApp(database, { clock });
    });
    beforeEach(() => resetDatabase(database));
    after(async () => {
      await t.close();
      await database.close();
    });

    it('createApiKey returns the secret once; the new key works; listings show metadata only', async () => {
      const { apiKey } = await seedAccount(t.app);
      const created = await graphql<Created>(t.url, {
        query: createKey,
        variables: { input: { name: ' laptop ' } },
        apiKey,
      });
      assert.deepEqual(errorCodes(created), []);
      const { secret, apiKey: info } = created.body.data!.createApiKey;
      assert.match(secret, /^svc_[A-Za-z0-9]{32}$/);
      assert.equal(info.name, 'laptop');
      assert.equal(info.prefix, secret.slice(0, 8));

      assert.equal((await graphql(t.url, { query: me, apiKey: secret })).status, 200);

      const listed = await graphql<{ listApiKeys: Array<Record<string, unknown>> }>(t.url, {
        query: listKeys,
        apiKey: secret,
      });
      const rows = listed.body.data!.listApiKeys;
      assert.equal(rows.length, 2);
      assert.equal(
        JSON.stringify(listed.body).includes(secret.slice(8)),
        false,
        'no secret in listings',
      );
      assert.ok(
        rows.some((r) => r.id === info.id && r.lastUsedAt !== null),
        'the used key shows lastUsedAt',
      );
    });

    it('a key cannot be listed by its secret through introspection either', async () => {
      const res = await graphql<{ __type: { fields: Array<{ name: string }> } }>(t.url, {
        query: '{ __type(name: "ApiKey") { fields { name } } }',
      });
      const names = res.body.data!.__type.fields.map((f) => f.name);
      assert.equal(names.includes('secret'), false);
      assert.equal(
        names.some((n) => /hash/i.test(n)),
        false,
      );
    });

    it('without API-key access, createApiKey is refused with 110202 and nothing is created', async () => {
      const { account, apiKey } = await seedAccount(t.app, { apiKeyAccess: false });
      const res = await graphql(t.url, {
        query: createKey,
        variables: { input: { name: 'x' } },
        apiKey,
      });
      assert.deepEqual(errorCodes(res), ['110202']);
      assert.equal(await keyCount(database, account.id), 1);
    });

    it('bad input gets 120001 naming every field, and creates nothing', async () => {
      const { account, apiKey } = await seedAccount(t.app);
      const res = await graphql(t.url, {
        query: createKey,
        variables: {
          input: { name: '   ', expiresAt: new Date(clock.now().getTime() - 1000).toISOString() },
        },
        apiKey,
      });
      assert.deepEqual(errorCodes(res), ['120001']);
      const ext = res.body.errors?.[0]?.extensions as {
        field: string;
        problems: Array<{ field: string }>;
      };
      assert.equal(ext.field, 'name');
      assert.deepEqual(
        ext.problems.map((p) => p.field),
        ['name', 'expiresAt'],
      );
      assert.equal(await keyCount(database, account.id), 1);
    });

    it('a malformed DateTime is 120001 (a request error: 400 for graphql-response+json)', async () => {
      const { apiKey } = await seedAccount(t.app);
      const res = await graphql(t.url, {
        query: createKey,
        variables: { input: { name: 'x', expiresAt: 'next tuesday' } },
        apiKey,
        headers: { accept: 'application/graphql-response+json' },
      });
      assert.equal(res.status, 400);
      assert.equal('data' in res.body, false);
      assert.deepEqual(errorCodes(res), ['120001']);
    });

    it('a revoked key fails on the very next request', async () => {
      const { apiKey, apiKeyId } = await seedAccount(t.app);
      assert.equal((await graphql(t.url, { query: me, apiKey })).status, 200); // now cached
      const revoked = await graphql<{ revokeApiKey: { id: string; revokedAt: string } }>(t.url, {
        query: revokeKey,
        variables: { id: apiKeyId },
        apiKey,
      });
      assert.equal(revoked.body.data?.revokeApiKey.id, apiKeyId);
      assert.ok(revoked.body.data?.revokeApiKey.revokedAt);
      const next = await graphql(t.url, { query: me, apiKey });
      assert.equal(next.status, 401);
      assert.deepEqual(errorCodes(next), ['100101']);
    });

    it("another account's key cannot be revoked: 140004, and it keeps working", async () => {
      const owner = await seedAccount(t.app);
      const other = await seedAccount(t.app);
      const res = await graphql(t.url, {
        query: revokeKey,
        variables: { id: owner.apiKeyId },
        apiKey: other.apiKey,
      });
      assert.deepEqual(errorCodes(res), ['140004']);
      assert.equal(res.body.data?.revokeApiKey, null);
      assert.equal((await graphql(t.url, { query: me, apiKey: owner.apiKey })).status, 200);
    });

    it('listings show only the caller account’s keys', async () => {
      const a = await seedAccount(t.app);
      const b = await seedAccount(t.app);
      const res = await graphql<{ listApiKeys: Array<{ id: string }> }>(t.url, {
        query: listKeys,
        apiKey: a.apiKey,
      });
      assert.deepEqual(
        res.body.data?.listApiKeys.map((k) => k.id),
        [a.apiKeyId],
      );
      assert.notEqual(a.apiKeyId, b.apiKeyId);
    });

    it('an expiring key works until its expiry and not a moment after', async () => {
      const { apiKey } = await seedAccount(t.app);
      const created = await graphql<Created>(t.url, {
        query: createKey,
        variables: {
          input: {
            name: 'short',
            expiresAt: new Date(clock.now().getTime() + 60_000).toISOString(),
          },
        },
        apiKey,
      });
      const short = created.body.data!.createApiKey.secret;
      assert.equal((await graphql(t.url, { query: me, apiKey: short })).status, 200);
      clock.advance(59_000);
      assert.equal((await graphql(t.url, { query: me, apiKey: short })).status, 200);
      clock.advance(1_000);
      const expired = await graphql(t.url, { query: me, apiKey: short });
      assert.equal(expired.status, 401);
      assert.equal(
        (await graphql(t.url, { query: me, apiKey })).status,
        200,
        'other keys unaffected',
      );
    });

    it('the secret appears nowhere in the database or the logs', async () => {
      const { apiKey } = await seedAccount(t.app);
      const created = await graphql<Created>(t.url, {
        query: createKey,
        variables: { input: { name: 'x' } },
        apiKey,
      });
      const secret = created.body.data!.createApiKey.secret;
      await graphql(t.url, { query: me, apiKey: secret });
      await graphql(t.url, { query: me, headers: { authorization: `Bearer ${secret}x` } });

      const tables = ['accounts', 'credit_balances', 'credit_ledger', 'api_keys'];
      for (const table of tables) {
        const { rows } = await sql<{
          row: unknown;
        }>`SELECT row_to_json(t) AS row FROM ${sql.table(table)} t`.execute(database.db);
        const dump = JSON.stringify(rows);
        for (const s of [secret, apiKey]) {
          assert.equal(dump.includes(s), false, `${table} holds a key`);
          assert.equal(dump.includes(s.slice(8)), false, `${table} holds the secret part of a key`);
        }
      }
      const logs = t.logs();
      assert.ok(logs.length > 0, 'the app logged something');
      for (const s of [secret, apiKey])
        assert.equal(logs.includes(s.slice(8)), false, 'a key reached the log');
    });
  },
);

async function keyCount(database: Database, accountId: string): Promise<number> {
  const rows = await database.db
    .selectFrom('api_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .execute();
  return rows.length;
}
