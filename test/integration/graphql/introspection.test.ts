import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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

describe('error messages and introspection', () => {
  let database: Database;
  let production: TestApp;
  let development: TestApp;
  before(async () => {
    database = await createTestDatabase('pglite');
    production = await startTestApp(database, {
      env: { WORKER_CONCURRENCY: '0', NODE_ENV: 'production' },
    });
    development = await startTestApp(database, { env: { WORKER_CONCURRENCY: '0' } });
  });
  after(async () => {
    await production.close();
    await development.close();
    await database.close();
  });

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
