import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import {
  balances,
  countContents,
  generateImage,
  submitImage,
  submitOk,
  testModels,
} from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

const sketch = {
  modelId: 'mdl_atelier-sketch',
  prompt: 'a quiet harbour',
  width: 512,
  height: 512,
};

describeEachBackend('generation submissions: charged once, validated, isolated', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    // No workers: these tests look at submissions, not at their results.
    t = await startTestApp(database, { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  const contentCount = (accountId: string) => countContents(database, accountId);

  it('the same idempotencyKey and input return the first submission, charged once', async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const first = await submitOk(t.url, apiKey, { ...sketch, count: 2, idempotencyKey: 'order-1' });
    // Key order and explicit defaults do not make it a different input.
    const again = await submitOk(t.url, apiKey, {
      idempotencyKey: 'order-1',
      count: 2,
      height: 512,
      width: 512,
      prompt: sketch.prompt,
      modelId: sketch.modelId,
    });
    assert.deepEqual(again, { ...first, deduplicated: true });
    assert.deepEqual(await balances(t.url, apiKey), { standard: 8 });
    assert.equal(await contentCount(account.id), 1);
  });

  it('the same key with a different input is refused with 120003 and charges nothing', async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    await submitOk(t.url, apiKey, { ...sketch, idempotencyKey: 'k' });
    const res = await generateImage(t.url, apiKey, {
      ...sketch,
      prompt: 'another prompt',
      idempotencyKey: 'k',
    });
    assert.deepEqual(errorCodes(res), ['120003']);
    assert.equal(res.body.errors?.[0]?.extensions?.charged, false);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 9 });
    assert.equal(await contentCount(account.id), 1);
  });

  it('another account may use the same idempotencyKey independently', async () => {
    const a = await seedAccount(t.app);
    const b = await seedAccount(t.app);
    const fromA = await submitOk(t.url, a.apiKey, { ...sketch, idempotencyKey: 'shared' });
    const fromB = await submitOk(t.url, b.apiKey, { ...sketch, idempotencyKey: 'shared' });
    assert.notEqual(fromA.contentId, fromB.contentId);
    assert.equal(fromB.deduplicated, false);
  });

  it('insufficient credits: 130001 with required and available, charged false, nothing created', async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 3 } });
    const res = await generateImage(t.url, apiKey, { ...sketch, count: 4 });
    assert.deepEqual(errorCodes(res), ['130001']);
    const ext = res.body.errors?.[0]?.extensions;
    assert.deepEqual(
      [ext?.required, ext?.available, ext?.charged, ext?.retryable],
      [4, 3, false, false],
    );
    assert.equal(res.body.data?.generateImage, null);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 3 });
    assert.equal(await contentCount(account.id), 0);
  });

  it('an account never granted credits is refused alike: 130001, nothing charged or created', async () => {
    // No balance row at all: the submission's statement must not find the debit "done".
    const { account, apiKey } = await seedAccount(t.app, { credits: {} });
    for (const attempt of [1, 2]) {
      const res = await generateImage(t.url, apiKey, sketch);
      assert.deepEqual(errorCodes(res), ['130001'], `attempt ${attempt}`);
      const ext = res.body.errors?.[0]?.extensions;
      assert.deepEqual([ext?.required, ext?.available, ext?.charged], [1, 0, false]);
    }
    assert.equal(await contentCount(account.id), 0);
  });

  it('20 concurrent submissions with credits for 10: exactly 10 succeed, balance 0, the ledger agrees', async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => generateImage(t.url, apiKey, sketch)),
    );
    const codes = results.map((r) => errorCodes(r)[0] ?? 'ok');
    assert.equal(codes.filter((c) => c === 'ok').length, 10);
    assert.equal(codes.filter((c) => c === '130001').length, 10);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 0 });
    assert.equal(await contentCount(account.id), 10);
    const ledger = await database.db
      .selectFrom('credit_ledger')
      .select(['delta', 'reason'])
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(
      ledger.reduce((sum, r) => sum + r.delta, 0),
      0,
    );
    assert.equal(ledger.filter((r) => r.reason === 'debit').length, 10);
  });

  it('several generation fields in one document are separate, separately charged submissions', async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 5 } });
    const res = await graphql<{ a: { contentId: string }; b: { contentId: string } }>(t.url, {
      query: `mutation Two($x: GenerateImageInput!, $y: GenerateImageInput!) {
        a: generateImage(input: $x) { contentId }
        b: generateImage(input: $y) { contentId }
      }`,
      variables: { x: sketch, y: { ...sketch, count: 2 } },
      apiKey,
    });
    assert.deepEqual(errorCodes(res), []);
    assert.notEqual(res.body.data?.a.contentId, res.body.data?.b.contentId);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 2 });
    assert.equal(await contentCount(account.id), 2);
  });

  it('every violation is reported at once: 120001 for bad values, with the field and all problems', async () => {
    const { account, apiKey } = await seedAccount(t.app);
    const res = await generateImage(t.url, apiKey, {
      modelId: sketch.modelId,
      prompt: '  ',
      seed: -1,
      count: 0,
      format: 'gif',
    });
    assert.deepEqual(errorCodes(res), ['120001']);
    const ext = res.body.errors?.[0]?.extensions as {
      field: string;
      charged: boolean;
      problems: Array<{ field: string; code: string }>;
    };
    assert.equal(ext.field, 'prompt');
    assert.equal(ext.charged, false);
    assert.deepEqual(ext.problems.map((p) => `${p.field}:${p.code}`).sort(), [
      'count:120001',
      'format:120002',
      'prompt:120001',
      'seed:120001',
    ]);
    assert.equal(await contentCount(account.id), 0);
  });

  it('unsupported settings and combinations are 120002 with what is allowed', async () => {
    const { apiKey } = await seedAccount(t.app);
    const size = await generateImage(t.url, apiKey, { ...sketch, width: 800, height: 600 });
    assert.deepEqual(errorCodes(size), ['120002']);
    const allowedSizes = size.body.errors?.[0]?.extensions?.allowed as Array<{
      width: number;
      height: number;
    }>;
    assert.ok(allowedSizes.some((s) => s.width === 1024 && s.height === 576));

    const ratio = await generateImage(t.url, apiKey, {
      ...sketch,
      width: 1024,
      height: 576,
      aspectRatio: '1:1',
    });
    assert.deepEqual(errorCodes(ratio), ['120002']);
    assert.equal(ratio.body.errors?.[0]?.extensions?.field, 'aspectRatio');

    const count = await generateImage(t.url, apiKey, {
      ...sketch,
      width: 1024,
      height: 576,
      count: 3,
    });
    assert.deepEqual(errorCodes(count), ['120002']);
    assert.deepEqual(count.body.errors?.[0]?.extensions?.allowed, { maxCount: 2 });
  });

  it('a model under maintenance or restricted to admins is refused with 110202; unknown ones with 140004', async () => {
    const { apiKey } = await seedAccount(t.app);
    const maintenance = await generateImage(t.url, apiKey, {
      ...sketch,
      modelId: 'mdl_atelier-poster',
    });
    assert.deepEqual(errorCodes(maintenance), ['110202']);
    assert.equal(maintenance.body.errors?.[0]?.extensions?.status, 'maintenance');
    const restricted = await generateImage(t.url, apiKey, {
      ...sketch,
      modelId: 'mdl_atelier-studio',
    });
    assert.deepEqual(errorCodes(restricted), ['110202']);
    const unknown = await generateImage(t.url, apiKey, { ...sketch, modelId: 'mdl_nope' });
    assert.deepEqual(errorCodes(unknown), ['140004']);
    const element = await generateImage(t.url, apiKey, {
      ...sketch,
      elementIds: ['elm_sun', 'elm_nope'],
    });
    assert.deepEqual(errorCodes(element), ['140004']);
    assert.deepEqual(element.body.errors?.[0]?.extensions?.missing, ['elm_nope']);
  });

  it('an admin may use the restricted model; accessible says so per caller, null without a credential', async () => {
    const admin = await t.app.services.accounts.create({
      alias: `admin-${backend}`,
      role: 'admin',
      apiKeyAccess: true,
      credits: { standard: 8 },
    });
    const adminKey = (await t.app.services.apiKeys.issue(admin.id, { name: 't' })).secret;
    const user = await seedAccount(t.app);
    const query =
      '{ getModel(modelId: "mdl_atelier-studio") { modelId accessible status pricing { unit credits } } }';
    const as = async (apiKey?: string) =>
      (
        await graphql<{ getModel: { accessible: boolean | null } }>(t.url, {
          query,
          ...(apiKey ? { apiKey } : {}),
        })
      ).body.data?.getModel.accessible;
    assert.equal(await as(adminKey), true);
    assert.equal(await as(user.apiKey), false);
    assert.equal(await as(), null);
    await submitOk(t.url, adminKey, {
      modelId: 'mdl_atelier-studio',
      prompt: 'big',
      width: 2048,
      height: 2048,
    });
    assert.deepEqual(await balances(t.url, adminKey), { standard: 4 });
  });

  it('listModels and listElements are public, filterable and paginated', async () => {
    type Models = {
      listModels: {
        nodes: Array<{ modelId: string; status: string }>;
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    };
    const firstPage = await graphql<Models>(t.url, {
      query:
        '{ listModels(kind: image, first: 2) { nodes { modelId status } pageInfo { hasNextPage endCursor } } }',
    });
    assert.deepEqual(errorCodes(firstPage), []);
    assert.equal(firstPage.body.data?.listModels.nodes.length, 2);
    assert.equal(firstPage.body.data?.listModels.pageInfo.hasNextPage, true);
    const next = await graphql<Models>(t.url, {
      query:
        'query N($after: String) { listModels(kind: image, first: 50, after: $after) { nodes { modelId status } pageInfo { hasNextPage endCursor } } }',
      variables: { after: firstPage.body.data?.listModels.pageInfo.endCursor },
    });
    const all = [...firstPage.body.data!.listModels.nodes, ...next.body.data!.listModels.nodes].map(
      (m) => m.modelId,
    );
    assert.equal(new Set(all).size, all.length, 'no model twice across pages');
    assert.ok(all.includes('mdl_atelier-sketch') && all.includes('mdl_test-slow'));
    const ready = await graphql<Models>(t.url, {
      query: '{ listModels(status: maintenance) { nodes { modelId status } } }',
    });
    assert.deepEqual(ready.body.data?.listModels.nodes, [
      { modelId: 'mdl_atelier-poster', status: 'maintenance' },
    ]);
    const elements = await graphql<{
      listElements: { nodes: Array<{ elementId: string; public: boolean }> };
    }>(t.url, {
      query: '{ listElements(kind: object) { nodes { elementId public } } }',
    });
    assert.deepEqual(elements.body.data?.listElements.nodes, [
      { elementId: 'elm_sun', public: true },
      { elementId: 'elm_house', public: true },
    ]);
    const badCursor = await graphql(t.url, {
      query: '{ listModels(after: "garbage") { nodes { modelId } } }',
    });
    assert.deepEqual(errorCodes(badCursor), ['120001']);
  });

  it('estimateCost prices exactly as submission does and says whether it is affordable', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 3 } });
    const query =
      'query E($input: CostEstimateInput!) { estimateCost(input: $input) { credits category affordable } }';
    const estimate = (input: Record<string, unknown>, key?: string) =>
      graphql<{ estimateCost: { credits: number; affordable: boolean | null } }>(t.url, {
        query,
        variables: { input: { kind: 'image', input } },
        ...(key ? { apiKey: key } : {}),
      });
    assert.deepEqual((await estimate({ ...sketch, count: 3 }, apiKey)).body.data?.estimateCost, {
      credits: 3,
      category: null,
      affordable: true,
    });
    assert.deepEqual((await estimate({ ...sketch, count: 4 }, apiKey)).body.data?.estimateCost, {
      credits: 4,
      category: null,
      affordable: false,
    });
    assert.deepEqual((await estimate({ ...sketch, count: 4 })).body.data?.estimateCost, {
      credits: 4,
      category: null,
      affordable: null,
    });
    assert.deepEqual(errorCodes(await estimate({ ...sketch, count: 9 }, apiKey)), ['120002']);
    await submitOk(t.url, apiKey, { ...sketch, count: 3 });
    assert.deepEqual(await balances(t.url, apiKey), { standard: 0 });
  });

  it('listContents: newest first, filtered, paginated; the place to reconcile an uncertain submission', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await submitOk(t.url, apiKey, { ...sketch, idempotencyKey: `batch-${i}` })).contentId,
      );
    type List = {
      listContents: {
        nodes: Array<{ contentId: string; idempotencyKey: string }>;
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
    };
    const query = `query L($after: String, $filter: ContentFilter) {
      listContents(first: 2, after: $after, filter: $filter) { nodes { contentId idempotencyKey } pageInfo { hasNextPage endCursor } }
    }`;
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: { body: { data?: List | null } } = await graphql<List>(t.url, {
        query,
        variables: { after },
        apiKey,
      });
      seen.push(...page.body.data!.listContents.nodes.map((n) => n.contentId));
      if (!page.body.data!.listContents.pageInfo.hasNextPage) break;
      after = page.body.data!.listContents.pageInfo.endCursor;
    }
    assert.deepEqual(seen, [...ids].reverse());
    const byKey = await graphql<List>(t.url, {
      query,
      variables: { filter: { idempotencyKey: 'batch-3' } },
      apiKey,
    });
    assert.deepEqual(
      byKey.body.data?.listContents.nodes.map((n) => n.contentId),
      [ids[3]],
    );
    const queued = await graphql<List>(t.url, {
      query,
      variables: { filter: { status: 'finished' } },
      apiKey,
    });
    assert.deepEqual(queued.body.data?.listContents.nodes, []);
  });

  it("another account's content, task and media IDs leak nothing", async () => {
    const owner = await seedAccount(t.app);
    const other = await seedAccount(t.app);
    const { contentId, taskId } = await submitOk(t.url, owner.apiKey, sketch);
    const probes = [
      ['query Q($id: ID!) { getContent(contentId: $id) { contentId input } }', contentId],
      ['query Q($id: ID!) { getTask(taskId: $id) { taskId status } }', taskId],
      ['mutation Q($id: ID!) { cancelTask(taskId: $id) { taskId status } }', taskId],
      ['query Q($id: ID!) { getDownloadUrls(mediaIds: [$id]) { url } }', 'med_anything'],
    ] as const;
    for (const [query, id] of probes) {
      const res = await graphql(t.url, { query, variables: { id }, apiKey: other.apiKey });
      assert.deepEqual(errorCodes(res), ['140004'], query);
      assert.equal(JSON.stringify(res.body).includes(owner.account.id), false);
      assert.equal(JSON.stringify(res.body).includes(sketch.prompt), false);
    }
    const list = await graphql<{ listContents: { nodes: unknown[] } }>(t.url, {
      query: '{ listContents { nodes { contentId } } }',
      apiKey: other.apiKey,
    });
    assert.deepEqual(list.body.data?.listContents.nodes, []);
    const task = await graphql<{ getTask: { status: string } }>(t.url, {
      query: probes[1][0],
      variables: { id: taskId },
      apiKey: owner.apiKey,
    });
    assert.equal(task.body.data?.getTask.status, 'queued', 'the other account could not cancel it');
  });

  it('submitting needs a credential; the error says nothing was charged', async () => {
    const res = await graphql(t.url, { query: submitImage, variables: { input: sketch } });
    assert.deepEqual(errorCodes(res), ['100101']);
    assert.equal(res.body.errors?.[0]?.extensions?.charged, false);
  });
});
