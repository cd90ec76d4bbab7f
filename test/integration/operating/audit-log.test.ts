import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { mcpAccessToken } from '../../helpers/mcp.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';

// Issue 32 §3: the audit log. Every credential and money event and every admin action is one
// entry: what, on what, by which account and credential, from where, when. An account reads
// what concerns it (an operator's act on it reads "operator"); admins read everyone's. Entries
// never change, and leave only when older than AUDIT_RETENTION_DAYS.

const auditQuery = `query L($filter: AuditLogFilter, $first: Int, $after: String) {
  auditLog(filter: $filter, first: $first, after: $after) {
    nodes { id at accountId action target detail actor { accountId credential address } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Entry {
  id: string;
  at: string;
  accountId: string | null;
  action: string;
  target: string | null;
  detail: Record<string, unknown> | null;
  actor: { accountId: string | null; credential: string; address: string | null };
}
interface AuditPage {
  auditLog: { nodes: Entry[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

describeEachBackend('the audit log (issue 32 §3)', (backend) => {
  const clock = new TestClock();
  let database: Database;
  let t: TestApp;
  let admin: SeededAccount;

  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, {
      clock,
      env: { WEBHOOK_ALLOW_LOCALHOST: 'true', AUDIT_RETENTION_DAYS: '30' },
    });
    admin = await seedAccount(t.app, { role: 'admin' });
  });
  after(async () => {
    await t?.close();
    await database?.close();
  });

  const read = async (apiKey: string, variables: Record<string, unknown> = {}) => {
    const answer = await graphql<AuditPage>(t.url, { query: auditQuery, variables, apiKey });
    assert.deepEqual(errorCodes(answer), [], JSON.stringify(answer.body.errors));
    return answer.body.data!.auditLog;
  };
  const call = async (apiKey: string, query: string, variables: Record<string, unknown> = {}) => {
    const answer = await graphql<Record<string, Record<string, unknown>>>(t.url, {
      query,
      variables,
      apiKey,
    });
    assert.deepEqual(errorCodes(answer), [], JSON.stringify(answer.body.errors));
    return answer.body.data!;
  };

  it('records key, limit and webhook changes by the credential and address that made them, never a secret', async () => {
    const owner = await seedAccount(t.app);
    const created = await call(
      owner.apiKey,
      'mutation { createApiKey(input: { name: "ci" }) { secret apiKey { id } } }',
    );
    const key = created.createApiKey as { secret: string; apiKey: { id: string } };
    await call(
      owner.apiKey,
      `mutation { setApiKeyLimits(apiKeyId: "${key.apiKey.id}", limits: { credits: [{ category: "standard", period: day, credits: 5 }] }) { id } }`,
    );
    await call(owner.apiKey, `mutation { revokeApiKey(apiKeyId: "${key.apiKey.id}") { id } }`);
    const hook = await call(
      owner.apiKey,
      'mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:9/hook", events: [task_finished] }) { secret endpoint { id } } }',
    );
    const endpoint = hook.createWebhookEndpoint as { secret: string; endpoint: { id: string } };
    const rotated = await call(
      owner.apiKey,
      `mutation { rotateWebhookSecret(endpointId: "${endpoint.endpoint.id}") { secret } }`,
    );
    await call(
      owner.apiKey,
      `mutation { deleteWebhookEndpoint(endpointId: "${endpoint.endpoint.id}") { id } }`,
    );

    const { nodes } = await read(owner.apiKey);
    assert.deepEqual(
      nodes.map((e) => [e.action, e.target]),
      [
        ['webhook.endpoint_deleted', endpoint.endpoint.id],
        ['webhook.secret_rotated', endpoint.endpoint.id],
        ['webhook.endpoint_created', endpoint.endpoint.id],
        ['api_key.revoked', key.apiKey.id],
        ['api_key.limits_changed', key.apiKey.id],
        ['api_key.created', key.apiKey.id],
        ['api_key.created', owner.apiKeyId],
        ['account.created', owner.account.id],
      ],
    );
    for (const entry of nodes.slice(0, 6)) {
      assert.deepEqual(entry.actor, {
        accountId: owner.account.id,
        credential: `api_key:${owner.apiKeyId}`,
        address: '127.0.0.1',
      });
      assert.equal(entry.accountId, owner.account.id);
      assert.equal(entry.at, clock.now().toISOString(), 'written on the clock port');
    }
    assert.deepEqual(nodes.at(-1)?.actor, {
      accountId: null,
      credential: 'operator',
      address: null,
    });
    assert.deepEqual(nodes[5]?.detail, {
      name: 'ci',
      prefix: key.secret.slice(0, 8),
      expiresAt: null,
    });
    const text = JSON.stringify(nodes);
    for (const secret of [key.secret, endpoint.secret, rotated.rotateWebhookSecret!.secret]) {
      assert.ok(!text.includes(String(secret)), 'no secret in the log');
    }
  });

  it('records an MCP consent given in the browser and its revocation', async () => {
    const owner = await seedAccount(t.app);
    await mcpAccessToken(t, owner.account.id);
    await call(
      owner.apiKey,
      'mutation { revokeMcpConnection(clientId: "atelier-local-tools") { clientId } }',
    );
    const { nodes } = await read(owner.apiKey, { first: 2 });
    assert.deepEqual(
      nodes.map((e) => [e.action, e.target, e.actor.credential]),
      [
        ['mcp.revoked', 'atelier-local-tools', `api_key:${owner.apiKeyId}`],
        ['mcp.consented', 'atelier-local-tools', 'browser_session'],
      ],
    );
    assert.equal(nodes[1]?.actor.address, '127.0.0.1');
    assert.equal(nodes[1]?.detail?.scopes, 'mcp:access');
  });

  it('an account reads only what concerns it; admins read everyone’s and see who acted', async () => {
    const alice = await seedAccount(t.app);
    const bob = await seedAccount(t.app);
    await call(
      admin.apiKey,
      'mutation G($input: CreditAdjustmentInput!) { adminGrantCredits(input: $input) { amount } }',
      {
        input: {
          accountId: bob.account.id,
          category: 'standard',
          amount: 4,
          reason: 'refund of ticket 9',
        },
      },
    );

    const bobs = await read(bob.apiKey);
    assert.ok(bobs.nodes.every((e) => e.accountId === bob.account.id));
    const grant = bobs.nodes.find((e) => e.action === 'credits.granted');
    assert.deepEqual(grant?.detail, { amount: 4, balance: 104, reason: 'refund of ticket 9' });
    assert.deepEqual(grant?.actor, { accountId: null, credential: 'operator', address: null });
    assert.ok(!(await read(alice.apiKey)).nodes.some((e) => e.accountId === bob.account.id));

    const peeking = await graphql(t.url, {
      query: auditQuery,
      variables: { filter: { accountId: bob.account.id } },
      apiKey: alice.apiKey,
    });
    assert.deepEqual(errorCodes(peeking), ['110202']);

    const asAdmin = await read(admin.apiKey, {
      filter: { accountId: bob.account.id, action: 'credits.granted' },
    });
    assert.deepEqual(
      asAdmin.nodes.map((e) => e.actor),
      [
        {
          accountId: admin.account.id,
          credential: `api_key:${admin.apiKeyId}`,
          address: '127.0.0.1',
        },
      ],
    );
    const everyone = await read(admin.apiKey, { first: 100 });
    const concerned = new Set(everyone.nodes.map((e) => e.accountId));
    assert.ok(concerned.has(alice.account.id) && concerned.has(bob.account.id));
  });

  it('a key with spending limits reads no audit log, an admin’s included', async () => {
    for (const owner of [await seedAccount(t.app), admin]) {
      const limited = await call(
        owner.apiKey,
        'mutation { createApiKey(input: { name: "ci", limits: { credits: [{ category: "standard", period: day, credits: 5 }] } }) { secret } }',
      );
      const refused = await graphql(t.url, {
        query: auditQuery,
        apiKey: (limited.createApiKey as { secret: string }).secret,
      });
      assert.deepEqual(errorCodes(refused), ['110202']);
    }
  });

  it('pages newest first with cursors that only this reader can use; bad filters are 120001', async () => {
    const owner = await seedAccount(t.app);
    for (const name of ['one', 'two', 'three']) {
      await call(owner.apiKey, `mutation { createApiKey(input: { name: "${name}" }) { secret } }`);
    }
    const first = await read(owner.apiKey, { first: 2, filter: { action: 'api_key.created' } });
    assert.deepEqual(
      first.nodes.map((e) => e.detail?.name),
      ['three', 'two'],
    );
    const second = await read(owner.apiKey, {
      first: 2,
      after: first.pageInfo.endCursor,
      filter: { action: 'api_key.created' },
    });
    assert.deepEqual(
      second.nodes.map((e) => e.detail?.name),
      ['one', 'test'],
    );
    assert.equal(second.pageInfo.hasNextPage, false);

    const other = await seedAccount(t.app);
    const stolen = await graphql(t.url, {
      query: auditQuery,
      variables: { after: first.pageInfo.endCursor },
      apiKey: other.apiKey,
    });
    assert.deepEqual(errorCodes(stolen), ['120001']);
    const badAction = await graphql(t.url, {
      query: auditQuery,
      variables: { filter: { action: 'key.stolen' } },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(badAction), ['120001']);
    const backwards = await graphql(t.url, {
      query: auditQuery,
      variables: { filter: { since: '2031-01-02T00:00:00Z', until: '2031-01-01T00:00:00Z' } },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(backwards), ['120001']);
  });

  it('never changes an entry, and lets entries go only past the retention', async () => {
    const owner = await seedAccount(t.app);
    await assert.rejects(
      sql`UPDATE audit_log SET action = 'api_key.revoked' WHERE account_id = ${owner.account.id}`.execute(
        database.db,
      ),
      /append-only/,
    );
    const before = (await read(owner.apiKey)).nodes.length;
    assert.equal(before, 2);

    clock.advance(29 * 86_400_000);
    await call(owner.apiKey, 'mutation { createApiKey(input: { name: "later" }) { secret } }');
    assert.equal(await t.app.services.audit.purge(), 0, 'nothing is 30 days old yet');
    clock.advance(2 * 86_400_000);
    assert.ok((await t.app.services.audit.purge()) >= 2);
    const left = (await read(owner.apiKey)).nodes;
    assert.deepEqual(
      left.map((e) => e.detail?.name),
      ['later'],
    );
  });
});
