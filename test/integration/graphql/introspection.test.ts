import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

// Introspection is a transport switch; PGlite is enough here.

/** Misspellings graphql-js would answer with "Did you mean …?", and the names it would give. */
const misspelled: { label: string; query: string; variables?: Record<string, unknown> }[] = [
  { label: 'field', query: '{ listModel { nodes { modelId } } }' },
  { label: 'argument', query: '{ listModels(frist: 1) { nodes { modelId } } }' },
  { label: 'enum value', query: '{ listModels(kind: imag) { nodes { modelId } } }' },
  {
    label: 'enum value in a variable',
    query: 'query Q($k: GenerationKind) { listModels(kind: $k) { nodes { modelId } } }',
    variables: { k: 'imag' },
  },
];

// One production and one development app serve both suites (each app is a PGlite instance).
describe('introspection and error wording', () => {
  let database: Database;
  let production: TestApp;
  let development: TestApp;
  before(async () => {
    database = await createTestDatabase('pglite');
    production = await startTestApp(database, {
      env: { WORKER_CONCURRENCY: '0', NODE_ENV: 'production' },
    });
    // A tight depth limit: the introspection query (15 levels) must not count against it.
    development = await startTestApp(database, {
      env: { WORKER_CONCURRENCY: '0', GRAPHQL_MAX_DEPTH: '4', GRAPHQL_MAX_COST: '600' },
    });
  });
  after(async () => {
    await production.close();
    await development.close();
    await database.close();
  });

  describe('error messages and introspection', () => {
    it('without introspection, no error suggests a field, argument or enum value', async () => {
      for (const { label, query, variables } of misspelled) {
        const res = await graphql(production.url, { query, ...(variables ? { variables } : {}) });
        assert.deepEqual(errorCodes(res), ['120001'], label);
        const text = JSON.stringify(res.body);
        assert.doesNotMatch(text, /did you mean/i, label);
        assert.doesNotMatch(text, /listModels\b.*first|"image"|enum value "image"/, label);
        // The mistake itself is still named, so the caller can fix it.
        assert.match(res.body.errors?.[0]?.message ?? '', /listModel|frist|imag/, label);
      }
    });

    it('without introspection, WebSocket errors carry no suggestion either', async () => {
      const { client } = wsClient(production.url);
      try {
        for (const { label, query, variables } of misspelled) {
          const run = collect(client, query, variables);
          const outcome = await run.finished;
          const text = JSON.stringify([outcome.error, run.results]);
          assert.match(text, /120001/, label);
          assert.doesNotMatch(text, /did you mean/i, label);
        }
      } finally {
        await client.dispose();
      }
    });

    it('with introspection on (development), the suggestions stay', async () => {
      for (const { label, query, variables } of misspelled) {
        const res = await graphql(development.url, { query, ...(variables ? { variables } : {}) });
        assert.match(JSON.stringify(res.body), /Did you mean/, label);
      }
    });
  });

  describe('the standard introspection query', () => {
    it('is answered in full in development, whatever the depth and cost limits', async () => {
      for (const query of [
        getIntrospectionQuery(),
        // What GraphiQL and graphql-codegen send with every option on.
        getIntrospectionQuery({
          descriptions: true,
          specifiedByUrl: true,
          directiveIsRepeatable: true,
          schemaDescription: true,
          inputValueDeprecation: true,
          oneOf: true,
        }),
      ]) {
        const res = await graphql<IntrospectionQuery>(development.url, {
          query,
          operationName: 'IntrospectionQuery',
        });
        assert.equal(res.status, 200);
        assert.deepEqual(errorCodes(res), []);
        const schema = buildClientSchema(res.body.data!);
        assert.ok(schema.getQueryType()?.getFields().listModels);
      }
    });

    it('deep real fields stay refused, with or without introspection beside them', async () => {
      const deep = 'listContents { nodes { task { taskId } media { download { url } } } }';
      for (const query of [`{ ${deep} }`, `{ __schema { queryType { name } } ${deep} }`]) {
        const res = await graphql(development.url, { query });
        assert.deepEqual(errorCodes(res), ['150030'], query);
        assert.equal(res.body.errors?.[0]?.extensions?.limit, 'depth');
      }
    });

    it('introspection that multiplies itself (fields of types of fields…) is refused', async () => {
      // graphql-js' MaxIntrospectionDepthRule, among the rules every document passes.
      const res = await graphql(development.url, {
        query: '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
      });
      assert.deepEqual(errorCodes(res), ['120001']);
      assert.match(res.body.errors?.[0]?.message ?? '', /introspection depth/i);
      assert.equal(res.body.data, null);
    });

    it('is refused in production, as before', async () => {
      const res = await graphql(production.url, {
        query: getIntrospectionQuery(),
        operationName: 'IntrospectionQuery',
      });
      assert.ok(errorCodes(res).length > 0);
      assert.ok(
        errorCodes(res).every((c) => c === '120001'),
        JSON.stringify(errorCodes(res)),
      );
      assert.match(res.body.errors?.[0]?.message ?? '', /introspection/i);
      assert.equal(res.body.data, null);
    });
  });
});
