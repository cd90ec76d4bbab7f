import assert from 'node:assert/strict';
import { beforeEach, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { testModels } from '../../helpers/generation.ts';
import { errorCodes, type GraphqlResponse, graphql } from '../../helpers/graphql.ts';
import { mcpAccessToken } from '../../helpers/mcp.ts';
import { idTokenFor, type SeededAccount, seedAccount } from '../../helpers/seed.ts';

// Issue 30 §2: a key with spending limits, as the only credential, could mint an unlimited key,
// lift its own limits, revoke the owner's other keys and change an agent's limits. Now the
// account is managed by its owner signed in (an ID token) or with a key without limits; a
// limited key reads its own entry and revokes itself, nothing more.

const limits = { credits: [{ category: 'standard', period: 'day', credits: 5 }] };
const keyFields = 'id name limits { credits { credits } }';

describeEachBackend(
  'who may manage keys, limits, webhooks and connections (issue 30)',
  (backend) => {
    let t: TestApp;
    let database: Database;
    withTestApp(backend, { env: { MODELS: testModels, WEBHOOK_ALLOW_LOCALHOST: 'true' } }, (s) => {
      ({ t, database } = s);
    });

    let owner: SeededAccount;
    let limited: { id: string; secret: string };
    beforeEach(async () => {
      owner = await seedAccount(t.app);
      const made = await graphql<{ createApiKey: { secret: string; apiKey: { id: string } } }>(
        t.url,
        {
          query: `mutation C($input: CreateApiKeyInput!) {
          createApiKey(input: $input) { secret apiKey { id } } }`,
          variables: { input: { name: 'limited', limits } },
          apiKey: owner.apiKey,
        },
      );
      assert.deepEqual(errorCodes(made), [], JSON.stringify(made.body.errors));
      limited = { id: made.body.data!.createApiKey.apiKey.id, ...made.body.data!.createApiKey };
    });

    const as = (apiKey: string, query: string, variables?: Record<string, unknown>) =>
      graphql(t.url, { query, apiKey, ...(variables ? { variables } : {}) });

    function refused(res: GraphqlResponse<unknown>) {
      assert.deepEqual(errorCodes(res), ['110202'], JSON.stringify(res.body.errors));
      const [error] = res.body.errors!;
      assert.equal(error!.extensions!.reason, 'management_right');
      assert.match(error!.message, /spending limits: it may read its own entry and revoke itself/);
    }

    const keyRows = () =>
      database.db
        .selectFrom('api_keys')
        .select(['id', 'revoked_at'])
        .where('account_id', '=', owner.account.id)
        .orderBy('id')
        .execute();
    const limitRows = () =>
      database.db
        .selectFrom('spending_limits')
        .select(['spender', 'credits'])
        .where('account_id', '=', owner.account.id)
        .orderBy('spender')
        .execute();

    it('a limited key creates no key, changes no limits and revokes no other key', async () => {
      const keysBefore = await keyRows();
      const limitsBefore = await limitRows();
      refused(
        await as(
          limited.secret,
          `mutation { createApiKey(input: { name: "escape" }) { secret apiKey { id } } }`,
        ),
      );
      for (const id of [limited.id, owner.apiKeyId]) {
        refused(
          await as(
            limited.secret,
            `mutation S($id: ID!) { setApiKeyLimits(apiKeyId: $id, limits: null) { id } }`,
            { id },
          ),
        );
      }
      refused(
        await as(limited.secret, `mutation R($id: ID!) { revokeApiKey(apiKeyId: $id) { id } }`, {
          id: owner.apiKeyId,
        }),
      );
      assert.deepEqual(await keyRows(), keysBefore);
      assert.deepEqual(await limitRows(), limitsBefore);
      // The owner's key still works.
      assert.deepEqual(errorCodes(await as(owner.apiKey, '{ getUserByPrivateId { id } }')), []);
    });

    it('a limited key lists only its own entry and may revoke itself', async () => {
      const listed = await as(limited.secret, `{ listApiKeys { ${keyFields} } }`);
      assert.deepEqual(errorCodes(listed), []);
      assert.deepEqual(
        (listed.body.data as { listApiKeys: { id: string; limits: unknown }[] }).listApiKeys.map(
          (k) => [k.id, k.limits],
        ),
        [[limited.id, { credits: [{ credits: 5 }] }]],
      );
      const all = await as(owner.apiKey, `{ listApiKeys { id } }`);
      assert.equal((all.body.data as { listApiKeys: unknown[] }).listApiKeys.length, 2);

      const revoked = await as(
        limited.secret,
        `mutation R($id: ID!) { revokeApiKey(apiKeyId: $id) { id revokedAt } }`,
        { id: limited.id },
      );
      assert.deepEqual(errorCodes(revoked), []);
      const after = await as(limited.secret, '{ getUserByPrivateId { id } }');
      assert.equal(after.status, 401, 'revoked: refused on the next request');
    });

    it('a limited key neither sees nor changes webhooks or MCP connections', async () => {
      await mcpAccessToken(t, owner.account.id); // the account has a connected agent
      const endpoint = await as(
        owner.apiKey,
        `mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:9/hook", events: [task_finished] }) { endpoint { id } } }`,
      );
      assert.deepEqual(errorCodes(endpoint), [], JSON.stringify(endpoint.body.errors));
      const endpointId = (
        endpoint.body.data as { createWebhookEndpoint: { endpoint: { id: string } } }
      ).createWebhookEndpoint.endpoint.id;
      const connections = await as(owner.apiKey, '{ listPersonalMcpConnections { clientId } }');
      const [{ clientId }] = (
        connections.body.data as { listPersonalMcpConnections: { clientId: string }[] }
      ).listPersonalMcpConnections as [{ clientId: string }];

      const attempts: [string, Record<string, unknown>?][] = [
        ['{ listPersonalMcpConnections { clientId } }'],
        [
          'mutation M($c: ID!) { setMcpConnectionLimits(clientId: $c, limits: null) { clientId } }',
          { c: clientId },
        ],
        ['mutation M($c: ID!) { revokeMcpConnection(clientId: $c) { clientId } }', { c: clientId }],
        ['{ listWebhookEndpoints { id } }'],
        ['{ oneOffWebhookEndpoint { id } }'],
        ['query D($e: ID!) { listWebhookDeliveries(endpointId: $e) { id } }', { e: endpointId }],
        [
          'mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:9/x", events: [task_finished] }) { secret } }',
        ],
        [
          'mutation U($e: ID!) { updateWebhookEndpoint(endpointId: $e, input: { enabled: false }) { id } }',
          { e: endpointId },
        ],
        [
          'mutation R($e: ID!) { rotateWebhookSecret(endpointId: $e) { secret } }',
          { e: endpointId },
        ],
        ['mutation { rotateOneOffWebhookSecret { secret } }'],
        [
          'mutation R($e: ID!) { replayWebhookDeliveries(endpointId: $e, since: "2000-01-01T00:00:00Z") }',
          { e: endpointId },
        ],
        ['mutation R($d: ID!) { replayWebhookDelivery(deliveryId: $d) }', { d: 'whd_unknown' }],
        ['mutation D($e: ID!) { deleteWebhookEndpoint(endpointId: $e) { id } }', { e: endpointId }],
      ];
      for (const [query, variables] of attempts)
        refused(await as(limited.secret, query, variables));

      // Nothing changed: the connection, its (absent) limits and the endpoint are as they were.
      const still = await as(
        owner.apiKey,
        '{ listPersonalMcpConnections { clientId revokedAt limits { kinds } } listWebhookEndpoints { id enabled } }',
      );
      assert.deepEqual(still.body.data, {
        listPersonalMcpConnections: [{ clientId, revokedAt: null, limits: null }],
        listWebhookEndpoints: [{ id: endpointId, enabled: true }],
      });
    });

    it('the owner signed in, or a key without limits, manages everything', async () => {
      const idToken = await idTokenFor(t, owner.account.id);
      const signedIn = await graphql<{ setApiKeyLimits: { id: string; limits: unknown } }>(t.url, {
        query: `mutation S($id: ID!) { setApiKeyLimits(apiKeyId: $id, limits: null) { ${keyFields} } }`,
        variables: { id: limited.id },
        headers: { 'x-idp-token': idToken },
      });
      assert.deepEqual(errorCodes(signedIn), [], JSON.stringify(signedIn.body.errors));
      assert.equal(signedIn.body.data!.setApiKeyLimits.limits, null);
      // Without limits now, the same key may manage the account like any unlimited key.
      const made = await as(
        limited.secret,
        `mutation { createApiKey(input: { name: "by a key without limits" }) { apiKey { id } } }`,
      );
      assert.deepEqual(errorCodes(made), [], JSON.stringify(made.body.errors));
      const listed = await as(limited.secret, '{ listApiKeys { id } }');
      assert.equal((listed.body.data as { listApiKeys: unknown[] }).listApiKeys.length, 3);
    });
  },
);
