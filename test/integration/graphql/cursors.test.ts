import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';

interface Connection {
  nodes: Record<string, string>[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

const lists = {
  models:
    'query P($after: String) { page: listModels(first: 1, after: $after) { nodes { modelId } pageInfo { hasNextPage endCursor } } }',
  contents:
    'query P($after: String) { page: listContents(first: 1, after: $after) { nodes { contentId } pageInfo { hasNextPage endCursor } } }',
  voices:
    'query P($after: String) { page: listVoiceModels(first: 1, after: $after) { nodes { voiceModelId } pageInfo { hasNextPage endCursor } } }',
} as const;

describeEachBackend('pagination cursors are bound to the caller', (backend) => {
  let database: Database;
  let t: TestApp;
  let alice: SeededAccount;
  let bob: SeededAccount;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } });
    alice = await seedAccount(t.app);
    bob = await seedAccount(t.app);
    for (const prompt of ['one', 'two']) {
      await submitOk(t.url, alice.apiKey, {
        modelId: 'mdl_test-fast',
        prompt,
        width: 64,
        height: 64,
      });
    }
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  const page = async (
    url: string,
    query: string,
    apiKey: string | undefined,
    cursor: string | null = null,
  ) => {
    const res = await graphql<{ page: Connection | null }>(url, {
      query,
      variables: { after: cursor },
      ...(apiKey === undefined ? {} : { apiKey }),
    });
    return res;
  };
  /** The end cursor of a first page of `query` for `apiKey`. */
  const cursorOf = async (url: string, query: string, apiKey: string | undefined) => {
    const cursor = (await page(url, query, apiKey)).body.data?.page?.pageInfo.endCursor;
    assert.ok(typeof cursor === 'string');
    return cursor;
  };
  const refused = (res: Awaited<ReturnType<typeof page>>, label: string) => {
    assert.deepEqual(errorCodes(res), ['120001'], label);
    assert.equal(res.body.errors?.[0]?.extensions?.field, 'after', label);
    assert.equal(res.body.data?.page ?? null, null, label);
  };

  it('the account that received a cursor gets the next page with it', async () => {
    for (const [name, query] of Object.entries(lists)) {
      const first = await page(t.url, query, alice.apiKey);
      const cursor = first.body.data?.page?.pageInfo.endCursor ?? null;
      assert.ok(cursor !== null && first.body.data?.page?.pageInfo.hasNextPage, name);
      const second = await page(t.url, query, alice.apiKey, cursor);
      assert.deepEqual(errorCodes(second), [], name);
      assert.notDeepEqual(second.body.data?.page?.nodes, first.body.data?.page?.nodes, name);
    }
  });

  it("another account's cursor, or an anonymous caller's, is 120001 on after", async () => {
    for (const [name, query] of Object.entries(lists)) {
      const mine = await cursorOf(t.url, query, alice.apiKey);
      refused(await page(t.url, query, bob.apiKey, mine), `${name}: another account`);
      if (name !== 'contents') {
        refused(await page(t.url, query, undefined, mine), `${name}: anonymous`);
        const anonymous = await cursorOf(t.url, query, undefined);
        refused(await page(t.url, query, alice.apiKey, anonymous), `${name}: anonymous's`);
      }
    }
    // One list's cursor does not page another.
    const models = await cursorOf(t.url, lists.models, alice.apiKey);
    refused(await page(t.url, lists.voices, alice.apiKey, models), 'models → voices');
  });

  it('a tampered, made-up or readable cursor is 120001, and cursors reveal nothing', async () => {
    const cursor = await cursorOf(t.url, lists.contents, alice.apiKey);
    const inside = Buffer.from(cursor, 'base64url').toString('latin1');
    assert.doesNotMatch(inside, /"t"|"id"|cnt_|\d{4}-\d\d-\d\d/);
    const flipped = `${cursor.slice(0, 20)}${cursor[20] === 'A' ? 'B' : 'A'}${cursor.slice(21)}`;
    const forged = Buffer.from(JSON.stringify({ t: new Date().toISOString(), id: 'x' })).toString(
      'base64url',
    );
    for (const bad of [flipped, forged, 'garbage', '']) {
      refused(await page(t.url, lists.contents, alice.apiKey, bad), JSON.stringify(bad));
    }
  });

  it('a cursor from one node pages on another (the key is shared)', async () => {
    const other = await startTestApp(database, {
      env: { MODELS: testModels, WORKER_CONCURRENCY: '0' },
    });
    try {
      const cursor = await cursorOf(t.url, lists.contents, alice.apiKey);
      const next = await page(other.url, lists.contents, alice.apiKey, cursor);
      assert.deepEqual(errorCodes(next), []);
      assert.equal(next.body.data?.page?.nodes.length, 1);
    } finally {
      await other.close();
    }
  });
});
