import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { generateImage, testModels } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { generateSpeech, remoteSpeechModel } from '../../helpers/remote-engines.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';

const listModels = '{ listModels(first: 100) { nodes { modelId accessible } } }';
const getModel = 'query M($id: ID!) { getModel(modelId: $id) { modelId } }';
const estimate =
  'query E($input: JSON!) { estimateCost(input: { kind: image, input: $input }) { credits } }';
const image = (modelId: string) => ({ modelId, prompt: 'a kite', width: 64, height: 64 });

/** The MCP tool result's error code (JSON details on the text's second line), or null. */
function toolErrorCode(result: object): string | null {
  const { isError, content } = result as { isError?: boolean; content?: { text: string }[] };
  if (isError !== true) return null;
  return (JSON.parse(content![0]!.text.split('\n')[1]!) as { error: { code: string } }).error.code;
}

describeEachBackend('a model restricted to accounts is private to them', (backend) => {
  let database: Database;
  let t: TestApp;
  let owner: SeededAccount;
  let other: SeededAccount;
  before(async () => {
    database = await createTestDatabase(backend);
    // The accounts exist before the app whose MODELS names one of them.
    const seeding = await startTestApp(database);
    owner = await seedAccount(seeding.app);
    other = await seedAccount(seeding.app);
    await seeding.close();
    const models = JSON.parse(testModels) as Record<string, unknown>[];
    const fast = models.find((m) => m.modelId === 'mdl_test-fast')!;
    models.push({
      ...fast,
      modelId: 'mdl_private',
      name: 'private',
      access: { kind: 'accounts', accountIds: [owner.account.id] },
    });
    // A private model server's voice (configured as voc_remote-en): never called here.
    models.push({
      ...remoteSpeechModel('mdl_private-voice', 'http://127.0.0.1:9/v1', 'tts-1', 'alloy'),
      access: { kind: 'accounts', accountIds: [owner.account.id] },
    });
    t = await startTestApp(database, {
      env: { MODELS: JSON.stringify(models), WORKER_CONCURRENCY: '0', REMOTE_KEY: 'sk-unused' },
    });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  /** A caller's view: its API key, or undefined for anonymous. */
  const callers = () => [
    { label: 'another account', apiKey: other.apiKey },
    { label: 'anonymous', apiKey: undefined },
  ];
  const ask = (query: string, apiKey: string | undefined, variables?: Record<string, unknown>) =>
    graphql<Record<string, { nodes?: { modelId: string }[] } | null>>(t.url, {
      query,
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(variables === undefined ? {} : { variables }),
    });

  it('the owner lists, reads, estimates and submits to it', async () => {
    const listed = await ask(listModels, owner.apiKey);
    assert.ok(listed.body.data?.listModels?.nodes?.some((m) => m.modelId === 'mdl_private'));
    const read = await ask(getModel, owner.apiKey, { id: 'mdl_private' });
    assert.deepEqual(read.body.data, { getModel: { modelId: 'mdl_private' } });
    const priced = await ask(estimate, owner.apiKey, { input: image('mdl_private') });
    assert.deepEqual(errorCodes(priced), []);
    const submitted = await generateImage(t.url, owner.apiKey, image('mdl_private'));
    assert.deepEqual(errorCodes(submitted), []);
  });

  it('over GraphQL, others neither list it nor read, estimate or submit to it: 140004 as unknown', async () => {
    for (const { label, apiKey } of callers()) {
      const listed = await ask(listModels, apiKey);
      const ids = listed.body.data?.listModels?.nodes?.map((m) => m.modelId) ?? [];
      assert.ok(ids.includes('mdl_test-fast'), label);
      assert.ok(!ids.includes('mdl_private'), label);

      for (const [query, variables] of [
        [getModel, { id: 'mdl_private' }],
        [estimate, { input: image('mdl_private') }],
      ] as const) {
        const hidden = await ask(query, apiKey, variables);
        const unknown = await ask(
          query,
          apiKey,
          JSON.parse(JSON.stringify(variables).replace('mdl_private', 'mdl_nothing')),
        );
        assert.deepEqual(errorCodes(hidden), ['140004'], `${label}: ${query}`);
        const shape = (r: typeof hidden) =>
          JSON.stringify(r.body.errors?.map((e) => [e.message, e.extensions?.field]))
            .replace('mdl_private', 'ID')
            .replace('mdl_nothing', 'ID');
        assert.equal(shape(hidden), shape(unknown), label);
      }
    }
    const before = await ask('{ listContents { nodes { contentId } } }', other.apiKey);
    const refused = await generateImage(t.url, other.apiKey, image('mdl_private'));
    assert.deepEqual(errorCodes(refused), ['140004']);
    assert.equal(refused.body.errors?.[0]?.extensions?.charged, false);
    const after = await ask('{ listContents { nodes { contentId } } }', other.apiKey);
    assert.deepEqual(after.body.data, before.body.data);
    const balance = await graphql<{ getUserByPrivateId: { creditBalances: unknown } }>(t.url, {
      query: '{ getUserByPrivateId { creditBalances { category amount } } }',
      apiKey: other.apiKey,
    });
    assert.deepEqual(balance.body.data?.getUserByPrivateId.creditBalances, [
      { category: 'standard', amount: 100 },
    ]);
  });

  it("its configured voices are private too: not listed, and named by others' requests as unknown", async () => {
    const voices = '{ listVoiceModels(language: "en", first: 100) { nodes { voiceModelId } } }';
    const listed = (apiKey: string | undefined) =>
      ask(voices, apiKey).then((r) => JSON.stringify(r.body.data?.listVoiceModels?.nodes));
    assert.match(await listed(owner.apiKey), /voc_remote-en/);
    const speak = (apiKey: string, voiceModelId: string) =>
      generateSpeech(t.url, apiKey, { modelId: 'mdl_atelier-voice', voiceModelId, text: 'Hi.' });
    // The owner may learn whose voice it is; it is still not a voice of another model.
    const own = await speak(owner.apiKey, 'voc_remote-en');
    assert.deepEqual(errorCodes(own), ['120001']);
    assert.match(JSON.stringify(own.body), /voc_remote-en is a voice of mdl_private-voice/);
    for (const { label, apiKey } of callers()) {
      const seen = await listed(apiKey);
      assert.doesNotMatch(seen, /voc_remote-en|mdl_private/, label);
      assert.match(seen, /voc_en/, `${label}: the built-in voices are listed`);
      if (apiKey === undefined) continue;
      const hidden = await speak(apiKey, 'voc_remote-en');
      const unknown = await speak(apiKey, 'voc_remote-nothing');
      assert.deepEqual(errorCodes(hidden), ['140004'], label);
      const shape = (r: typeof hidden) =>
        JSON.stringify(r.body.errors?.map((e) => [e.message, e.extensions?.field]))
          .replace('voc_remote-en', 'ID')
          .replace('voc_remote-nothing', 'ID');
      assert.equal(shape(hidden), shape(unknown), label);
      assert.doesNotMatch(JSON.stringify(hidden.body), /mdl_private/, label);
    }
  });

  it('over MCP, another account neither lists it nor estimates or submits to it: 140004', async () => {
    const client = await connectMcpClient(t, await mcpAccessToken(t, other.account.id));
    try {
      const listed = await client.callTool({ name: 'list_models', arguments: {} });
      const ids = (listed.structuredContent as { models: { model_id: string }[] }).models.map(
        (m) => m.model_id,
      );
      assert.ok(ids.includes('mdl_test-fast') && !ids.includes('mdl_private'), String(ids));
      const voices = await client.callTool({
        name: 'list_voice_models',
        arguments: { language: 'en' },
      });
      assert.doesNotMatch(JSON.stringify(voices.structuredContent), /voc_remote-en|mdl_private/);
      const args = { model_id: 'mdl_private', prompt: 'a kite', width: 64, height: 64 };
      for (const name of ['estimate_cost', 'generate_image']) {
        const result = await client.callTool({
          name,
          arguments: name === 'generate_image' ? { ...args, idempotency_key: 'k-1' } : args,
        });
        assert.equal(toolErrorCode(result), '140004', name);
      }
    } finally {
      await client.close();
    }
  });
});
