import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase, resetDatabase } from '../../helpers/database.ts';
import {
  balances,
  countContents,
  generateImage,
  submitOk,
  testModels,
  waitForTask,
} from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';

// Spending limits per API key and MCP connection (issue 21).
// Every fake test model costs 3 standard credits an image.

const limitFields = `limits {
  credits { category period credits spent remaining resetsAt }
  kinds modelIds
}`;
const createKey = `mutation Create($input: CreateApiKeyInput!) {
  createApiKey(input: $input) { secret apiKey { id ${limitFields} } }
}`;
const setKeyLimits = `mutation Set($id: ID!, $limits: SpendingLimitsInput) {
  setApiKeyLimits(apiKeyId: $id, limits: $limits) { id ${limitFields} }
}`;
const listKeys = `{ listApiKeys { id ${limitFields} } }`;

interface CreditLimit {
  category: string;
  period: 'day' | 'month';
  credits: number;
  spent: number;
  remaining: number;
  resetsAt: string;
}
interface Limits {
  credits: CreditLimit[];
  kinds: string[] | null;
  modelIds: string[] | null;
}
interface KeyWithLimits {
  id: string;
  limits: Limits | null;
}

describeEachBackend('spending limits of API keys and MCP connections (issue 21)', (backend) => {
  let database: Database;
  let t: TestApp;
  let owner: SeededAccount;
  // Noon UTC, so a test can move within the day and across midnight on purpose.
  const clock = new TestClock(Date.parse('2011-03-14T12:00:00Z'));
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, { clock, env: { MODELS: testModels } });
  });
  beforeEach(async () => {
    await resetDatabase(database);
    owner = await seedAccount(t.app, { credits: { standard: 100 } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  async function limitedKey(limits: Record<string, unknown>) {
    const res = await graphql<{ createApiKey: { secret: string; apiKey: KeyWithLimits } }>(t.url, {
      query: createKey,
      variables: { input: { name: 'limited', limits } },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
    return res.body.data!.createApiKey;
  }

  async function keyLimits(id: string): Promise<Limits | null> {
    const res = await graphql<{ listApiKeys: KeyWithLimits[] }>(t.url, {
      query: listKeys,
      apiKey: owner.apiKey,
    });
    return res.body.data!.listApiKeys.find((k) => k.id === id)!.limits;
  }

  it('a key spends up to its daily limit, then is refused with what remains and when', async () => {
    const { secret, apiKey } = await limitedKey({
      credits: [{ category: 'standard', period: 'day', credits: 7 }],
    });
    assert.deepEqual(apiKey.limits!.credits, [
      {
        category: 'standard',
        period: 'day',
        credits: 7,
        spent: 0,
        remaining: 7,
        resetsAt: '2011-03-15T00:00:00.000Z',
      },
    ]);
    await submitOk(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'one' });
    await submitOk(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'two' });
    const refused = await generateImage(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'x' });
    assert.deepEqual(errorCodes(refused), ['130001']);
    const ext = refused.body.errors![0]!.extensions!;
    assert.equal(ext.reason, 'spending_limit');
    assert.equal(ext.available, 1);
    assert.equal(ext.required, 3);
    assert.equal(ext.resetsAt, '2011-03-15T00:00:00.000Z');
    assert.equal(ext.charged, false);
    assert.equal(await countContents(database, owner.account.id), 2);
    assert.deepEqual(await balances(t.url, owner.apiKey), { standard: 94 });
    const listed = await keyLimits(apiKey.id);
    assert.equal(listed!.credits[0]!.spent, 6);
    assert.equal(listed!.credits[0]!.remaining, 1);

    // The account's other key is not limited by this one's spending.
    await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'free' });

    // After midnight UTC the day's limit is whole again.
    clock.advance(12 * 3_600_000);
    await submitOk(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'tomorrow' });
    assert.equal((await keyLimits(apiKey.id))!.credits[0]!.spent, 3);
    clock.advance(-12 * 3_600_000);
  });

  it('a refunded generation gives its credits back to the limit', async () => {
    const { secret, apiKey } = await limitedKey({
      credits: [{ category: 'standard', period: 'month', credits: 3 }],
    });
    const failed = await submitOk(t.url, secret, { modelId: 'mdl_test-fail', prompt: 'x' });
    assert.equal(
      (await waitForTask(t.url, secret, failed.taskId)).finishCode,
      FinishCode.RejectedInput,
    );
    assert.equal((await keyLimits(apiKey.id))!.credits[0]!.spent, 0);
    await submitOk(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'again' });
    assert.equal((await keyLimits(apiKey.id))!.credits[0]!.remaining, 0);
  });

  it('a key limited to some kinds or models is refused others with 110202, uncharged', async () => {
    const { secret } = await limitedKey({ kinds: ['speech'] });
    const wrongKind = await generateImage(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'x' });
    assert.deepEqual(errorCodes(wrongKind), ['110202']);
    assert.equal(wrongKind.body.errors![0]!.extensions!.field, 'modelId');

    const byModel = await limitedKey({ modelIds: ['mdl_test-fast'] });
    const wrongModel = await generateImage(t.url, byModel.secret, {
      modelId: 'mdl_test-quick',
      prompt: 'x',
    });
    assert.deepEqual(errorCodes(wrongModel), ['110202']);
    await submitOk(t.url, byModel.secret, { modelId: 'mdl_test-fast', prompt: 'allowed' });
    assert.equal(await countContents(database, owner.account.id), 1);
  });

  it('bad limits are refused with every problem named and change nothing', async () => {
    const { apiKey } = await limitedKey({
      credits: [{ category: 'standard', period: 'day', credits: 5 }],
    });
    const res = await graphql(t.url, {
      query: setKeyLimits,
      variables: {
        id: apiKey.id,
        limits: {
          credits: [
            { category: 'standard', period: 'day', credits: 0 },
            { category: 'standard', period: 'day', credits: 4 },
          ],
          modelIds: ['mdl_nope'],
        },
      },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(res), ['120001']);
    const fields = (res.body.errors![0]!.extensions!.problems as { field: string }[]).map(
      (p) => p.field,
    );
    assert.deepEqual(fields, [
      'limits.credits[0].credits',
      'limits.credits[1]',
      'limits.modelIds[0]',
    ]);
    assert.equal((await keyLimits(apiKey.id))!.credits[0]!.credits, 5);
  });

  it('limits are replaced or removed on the key, and another account cannot touch them', async () => {
    const { secret, apiKey } = await limitedKey({
      credits: [{ category: 'standard', period: 'day', credits: 3 }],
    });
    const stranger = await seedAccount(t.app);
    const foreign = await graphql(t.url, {
      query: setKeyLimits,
      variables: { id: apiKey.id, limits: null },
      apiKey: stranger.apiKey,
    });
    assert.deepEqual(errorCodes(foreign), ['140004']);

    const raised = await graphql<{ setApiKeyLimits: KeyWithLimits }>(t.url, {
      query: setKeyLimits,
      variables: {
        id: apiKey.id,
        limits: { credits: [{ category: 'standard', period: 'day', credits: 6 }] },
      },
      apiKey: owner.apiKey,
    });
    assert.equal(raised.body.data!.setApiKeyLimits.limits!.credits[0]!.credits, 6);
    await submitOk(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'one' });
    await submitOk(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'two' });

    const removed = await graphql<{ setApiKeyLimits: KeyWithLimits }>(t.url, {
      query: setKeyLimits,
      variables: { id: apiKey.id, limits: null },
      apiKey: owner.apiKey,
    });
    assert.equal(removed.body.data!.setApiKeyLimits.limits, null);
    await submitOk(t.url, secret, { modelId: 'mdl_test-fast', prompt: 'three' });
  });

  it('an MCP connection carries limits set in GraphQL, for its tool calls', async () => {
    const token = await mcpAccessToken(t, owner.account.id);
    const [connection] = (
      await graphql<{ listPersonalMcpConnections: { clientId: string }[] }>(t.url, {
        query: '{ listPersonalMcpConnections { clientId } }',
        apiKey: owner.apiKey,
      })
    ).body.data!.listPersonalMcpConnections;
    const set = await graphql<{ setMcpConnectionLimits: { limits: Limits } }>(t.url, {
      query: `mutation S($c: ID!, $l: SpendingLimitsInput) {
        setMcpConnectionLimits(clientId: $c, limits: $l) { ${limitFields} }
      }`,
      variables: {
        c: connection!.clientId,
        l: { credits: [{ category: 'standard', period: 'day', credits: 4 }] },
      },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(set), [], JSON.stringify(set.body.errors));
    assert.equal(set.body.data!.setMcpConnectionLimits.limits.credits[0]!.remaining, 4);

    const client = await connectMcpClient(t, token);
    try {
      const call = (prompt: string) =>
        client.callTool({
          name: 'generate_image',
          arguments: { model_id: 'mdl_test-fast', prompt, idempotency_key: prompt },
        });
      const first = await call('first');
      assert.notEqual(first.isError, true, JSON.stringify(first.content));
      const second = await call('second');
      assert.equal(second.isError, true);
      assert.match(JSON.stringify(second.content), /130001/);
      assert.match(JSON.stringify(second.content), /MCP connection may spend 4 standard/);
    } finally {
      await client.close();
    }
    assert.equal(await countContents(database, owner.account.id), 1);
  });
});
