import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

/** The limit named by the one 150030 error of a response. */
function limitOf(res: { body: { errors?: { extensions?: Record<string, unknown> }[] } }) {
  assert.equal(res.body.errors?.length, 1, JSON.stringify(res.body));
  const extensions = res.body.errors![0]!.extensions!;
  assert.equal(extensions.code, '150030', JSON.stringify(extensions));
  return { limit: extensions.limit, max: extensions.max, actual: extensions.actual };
}

describe('GraphQL abuse limits (HTTP and WebSocket)', () => {
  let database: Database;
  let t: TestApp;
  let apiKey: string;
  before(async () => {
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: {
        WORKER_CONCURRENCY: '0',
        GRAPHQL_MAX_DEPTH: '4',
        GRAPHQL_MAX_ALIASES: '5',
        GRAPHQL_MAX_ROOT_FIELDS: '4',
        GRAPHQL_MAX_COST: '600',
        GRAPHQL_MAX_TOKENS: '300',
        GRAPHQL_MAX_LENGTH: '4000',
        MAX_BODY_BYTES: '8192',
      },
    });
    ({ apiKey } = await seedAccount(t.app));
  });
  after(async () => {
    await t.close();
    await database.close();
  });
  // graphql-response+json: a refused document is a 400 (application/json keeps 200).
  const ask = (query: string, variables?: Record<string, unknown>) =>
    graphql(t.url, {
      query,
      apiKey,
      headers: { accept: 'application/graphql-response+json' },
      ...(variables === undefined ? {} : { variables }),
    });

  it('within the limits, a query runs as usual', async () => {
    const res = await ask(
      '{ a: getUserByPrivateId { id } listModels(first: 10) { nodes { modelId pricing { unit } } } }',
    );
    assert.deepEqual(errorCodes(res), []);
  });

  it('depth, aliases, root fields and cost are refused with 150030 naming the limit, before anything runs', async () => {
    const deep = await ask(
      '{ listContents { nodes { task { taskId } media { download { url } } } } }',
    );
    assert.equal(deep.status, 400);
    assert.deepEqual(limitOf(deep), { limit: 'depth', max: 4, actual: 5 });
    // Fragments count where they are spread.
    const viaFragment = await ask(
      'query { listContents { ...C } } fragment C on ContentConnection { nodes { media { download { url } } } }',
    );
    assert.equal(limitOf(viaFragment).limit, 'depth');

    const aliases = await ask(
      `{ ${Array.from({ length: 6 }, (_, i) => `a${i}: __typename`).join(' ')} }`,
    );
    assert.deepEqual(limitOf(aliases), { limit: 'aliases', max: 5, actual: 6 });

    const roots = await ask(
      '{ getUserByPrivateId { id } listApiKeys { id } listModels { nodes { name } } listElements { nodes { name } } listMcpClientInstructions { clientName } }',
    );
    assert.deepEqual(limitOf(roots), { limit: 'rootFields', max: 4, actual: 5 });

    // 1 + 100 × (nodes 1 + 3, pageInfo 1 + 1): the page size multiplies what is below it.
    const costly = await ask(
      '{ listModels(first: 100) { nodes { modelId name status } pageInfo { endCursor } } }',
    );
    assert.deepEqual(limitOf(costly), { limit: 'cost', max: 600, actual: 1 + 100 * (4 + 2) });
    const smallPage = await ask(
      '{ listModels(first: 10) { nodes { modelId name status } pageInfo { endCursor } } }',
    );
    assert.deepEqual(errorCodes(smallPage), []);
    // A variable page size counts as the largest page.
    const variable = await ask(
      'query Q($n: Int) { listModels(first: $n) { nodes { modelId name status } pageInfo { endCursor } } }',
      { n: 1 },
    );
    assert.equal(limitOf(variable).limit, 'cost');
  });

  it('a document too long or with too many tokens is refused before it is parsed', async () => {
    const long = await ask(`{ __typename ${' '.repeat(4000)} }`);
    assert.equal(long.status, 400);
    assert.equal(limitOf(long).limit, 'length');
    const tokens = await ask(`{ ${'__typename '.repeat(301)} }`);
    assert.equal(tokens.status, 400);
    assert.equal(limitOf(tokens).limit, 'tokens');
  });

  it('batched requests are refused; a body over MAX_BODY_BYTES is 413', async () => {
    const batch = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    assert.equal(batch.status, 400);
    const huge = await ask('query Q($x: String) { __typename }', { x: 'x'.repeat(10_000) });
    assert.equal(huge.status, 413);
    assert.equal(limitOf(huge).limit, 'bodyBytes');
  });

  it('introspection is answered in development', async () => {
    const res = await ask('{ __schema { queryType { name } } }');
    assert.deepEqual(res.body.data, { __schema: { queryType: { name: 'Query' } } });
  });

  it('the same limits hold over graphql-transport-ws', async () => {
    const { client } = wsClient(t.url, { apiKey });
    try {
      const run = collect(
        client,
        '{ listContents { nodes { task { taskId } media { download { url } } } } }',
      );
      const outcome = await run.finished;
      const errors = outcome.error as { extensions?: { code?: string; limit?: string } }[];
      assert.ok(Array.isArray(errors), JSON.stringify(outcome));
      assert.deepEqual(
        [errors[0]?.extensions?.code, errors[0]?.extensions?.limit],
        ['150030', 'depth'],
      );
      const long = collect(client, `{ ${'__typename '.repeat(301)} }`);
      const longErrors = (await long.finished).error as { extensions?: { limit?: string } }[];
      assert.equal(longErrors[0]?.extensions?.limit, 'tokens');
    } finally {
      await client.dispose();
    }
  });
});

describe('introspection in production', () => {
  it('is off with NODE_ENV=production, and GRAPHQL_INTROSPECTION=true turns it back on', async () => {
    const database = await createTestDatabase('pglite');
    try {
      for (const [env, answered] of [
        [{ NODE_ENV: 'production' }, false],
        // Issue 30 §3: the letter case does not matter, and a value Atelier does not know
        // (a typo, `staging`) is production, never development.
        [{ NODE_ENV: 'Production' }, false],
        [{ NODE_ENV: ' PRODUCTION ' }, false],
        [{ NODE_ENV: 'staging' }, false],
        [{ NODE_ENV: 'Development' }, true],
        [{ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }, true],
      ] as const) {
        const t = await startTestApp(database, { env: { WORKER_CONCURRENCY: '0', ...env } });
        try {
          const res = await graphql(t.url, { query: '{ __schema { queryType { name } } }' });
          if (answered) assert.deepEqual(errorCodes(res), []);
          else {
            assert.equal(res.status, 200); // application/json
            assert.ok(errorCodes(res).length > 0 && errorCodes(res).every((c) => c === '120001'));
            assert.match(res.body.errors![0]!.message, /introspection/i);
          }
          // Ordinary queries are unaffected (and __typename is not introspection).
          const plain = await graphql(t.url, {
            query: '{ __typename listModels(first: 1) { nodes { modelId } } }',
          });
          assert.deepEqual(errorCodes(plain), []);
        } finally {
          await t.close();
        }
      }
    } finally {
      await database.close();
    }
  });
});
