import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrator.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { FaultyRelay } from '../../helpers/faulty-relay.ts';
import {
  balances,
  countContents,
  generateImage,
  testModels,
  waitForTask,
} from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { openaiClient } from '../../helpers/openai.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 30 §7: when PostgreSQL committed a submission but its reply was lost (the connection
// dropped after the commit), GraphQL answered 190000 with `charged: false` — "safe to resubmit"
// — and /v1 a 500 with `x-should-retry: true`, so the OpenAI SDK made a second, charged
// generation. Now the submission is looked up by the content ID it had before the statement
// left, and the answer is the truth. A relay between Atelier and PostgreSQL drops the reply of
// the submission's statement (every statement is sent with its text: no named statements).

const submission = 'INSERT INTO contents';

describe('a submission whose reply is lost [PostgreSQL, relay]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let empty: Awaited<ReturnType<typeof createEmptyPostgresDatabase>>;
  let direct: Database;
  let relayed: Database;
  let relay: FaultyRelay;
  let t: TestApp;
  before(async () => {
    empty = await createEmptyPostgresDatabase();
    direct = await openDatabase({ backend: 'postgres', url: empty.url, poolSize: 2 });
    await migrateToLatest(direct.db);
    relay = await FaultyRelay.start(empty.url);
    relayed = await openDatabase({
      backend: 'postgres',
      url: relay.url,
      preparedStatements: false,
      statementTimeoutMs: 1_000,
      connectTimeoutMs: 1_000,
    });
    t = await startTestApp(relayed, { env: { MODELS: testModels } });
  });
  after(async () => {
    await t?.close();
    await relayed?.close();
    await relay?.close();
    await direct?.close();
    await empty?.drop();
  });

  it('GraphQL answers the submission that committed: its IDs, charged once', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    const lost = relay.dropReplyTo(submission);
    const res = await generateImage(t.url, apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a reply lost after the commit',
      idempotencyKey: 'lost-1',
    });
    await lost;
    assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body));
    const { contentId, taskId } = res.body.data!.generateImage!;
    assert.equal(await countContents(direct, account.id), 1);
    assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, FinishCode.Ok);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 97 }, 'charged once');
    // The same key again: the same generation, not a second charge.
    const again = await generateImage(t.url, apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a reply lost after the commit',
      idempotencyKey: 'lost-1',
    });
    assert.equal(again.body.data!.generateImage!.contentId, contentId);
  });

  it('/v1 answers the generation once: the official SDK makes no second one', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    const client = openaiClient(t.url, apiKey, { maxRetries: 2 });
    const lost = relay.dropReplyTo(submission);
    const image = await client.images.generate({
      model: 'mdl_test-fast',
      prompt: 'an SDK call whose reply is lost',
      response_format: 'b64_json',
    });
    await lost;
    assert.equal(image.data?.length, 1);
    assert.equal(await countContents(direct, account.id), 1, 'one generation, not two');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 97 });
  });

  it('a database silent after the statement: the outcome is unknown, said so, with the IDs', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    const held = relay.stallReplyTo(submission);
    const pending = generateImage(t.url, apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a reply that never comes',
    });
    await held;
    const res = await pending;
    relay.resume();
    assert.deepEqual(errorCodes(res), ['100102'], JSON.stringify(res.body));
    const ext = res.body.errors![0]!.extensions!;
    assert.equal(ext.charged, null, 'not "safe to resubmit"');
    assert.equal(ext.outcome, 'unknown');
    assert.equal(ext.retryable, true);
    assert.match(res.body.errors![0]!.message, /read content cnt_\S+ \(getContent\)/);
    // It had committed: reconciling by its ID finds it, charged once.
    const content = await graphql<{ getContent: { contentId: string } | null }>(t.url, {
      query: 'query C($id: ID!) { getContent(contentId: $id) { contentId } }',
      variables: { id: ext.contentId },
      apiKey,
    });
    assert.equal(content.body.data?.getContent?.contentId, ext.contentId);
    assert.equal(await countContents(direct, account.id), 1);
  });
});
