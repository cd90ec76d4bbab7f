import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase, resetDatabase } from '../../helpers/database.ts';
import {
  balances,
  countContents,
  generateImage,
  submitOk,
  testModels,
} from '../../helpers/generation.ts';
import { errorCodes } from '../../helpers/graphql.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';

// A price cap per generation (issue 21). Every fake test model costs 3 credits an image.

describeEachBackend('maxCredits on a generation (issue 21)', (backend) => {
  let database: Database;
  let t: TestApp;
  let owner: SeededAccount;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, { env: { MODELS: testModels } });
  });
  beforeEach(async () => {
    await resetDatabase(database);
    owner = await seedAccount(t.app, { credits: { standard: 100 } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('a price above maxCredits is refused with the price, before anything is charged', async () => {
    const res = await generateImage(t.url, owner.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a lighthouse',
      maxCredits: 2,
    });
    assert.deepEqual(errorCodes(res), ['130001'], JSON.stringify(res.body.errors));
    const ext = res.body.errors![0]!.extensions!;
    assert.equal(ext.reason, 'max_credits');
    assert.equal(ext.required, 3);
    assert.equal(ext.field, 'maxCredits');
    assert.equal(ext.charged, false);
    assert.equal(await countContents(database, owner.account.id), 0);
    assert.deepEqual(await balances(t.url, owner.apiKey), { standard: 100 });

    await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'x', maxCredits: 3 });
    assert.deepEqual(await balances(t.url, owner.apiKey), { standard: 97 });
  });

  it('a retry with the same idempotencyKey and another maxCredits is the same generation', async () => {
    const input = { modelId: 'mdl_test-fast', prompt: 'x', idempotencyKey: 'cap-1' };
    const first = await submitOk(t.url, owner.apiKey, { ...input, maxCredits: 5 });
    const again = await submitOk(t.url, owner.apiKey, { ...input, maxCredits: 4 });
    assert.equal(again.contentId, first.contentId);
    assert.equal(again.deduplicated, true);
  });

  it('a negative maxCredits is invalid input naming the field', async () => {
    const res = await generateImage(t.url, owner.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'x',
      maxCredits: -1,
    });
    assert.deepEqual(errorCodes(res), ['120001']);
    assert.equal(res.body.errors![0]!.extensions!.field, 'maxCredits');
    assert.equal(await countContents(database, owner.account.id), 0);
  });

  it('over MCP the generation tools take max_credits, with the same refusal', async () => {
    const client = await connectMcpClient(t, await mcpAccessToken(t, owner.account.id));
    try {
      const refused = await client.callTool({
        name: 'generate_image',
        arguments: { model_id: 'mdl_test-fast', prompt: 'x', max_credits: 1 },
      });
      assert.equal(refused.isError, true);
      assert.match(JSON.stringify(refused.content), /130001/);
      // MCP spells the field as its tools do, in the message and in `field`.
      assert.match(JSON.stringify(refused.content), /more than its max_credits of 1/);
      assert.match(JSON.stringify(refused.content), /\\"field\\":\\"max_credits\\"/);
    } finally {
      await client.close();
    }
    assert.equal(await countContents(database, owner.account.id), 0);
  });
});
