import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Transport behaviour does not depend on the database; PGlite is enough here.
let database: Database;
let t: TestApp;
before(async () => {
  database = await createTestDatabase('pglite');
  t = await startTestApp(database);
});
after(async () => {
  await t.close();
  await database.close();
});

it('GET /graphql answers queries', async () => {
  const { apiKey } = await seedAccount(t.app);
  const query = encodeURIComponent('{ getUserByPrivateId { alias } }');
  const res = await fetch(`${t.url}/graphql?query=${query}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: { getUserByPrivateId: { alias: string } } };
  assert.match(body.data.getUserByPrivateId.alias, /^user-/);
});

it('GET /graphql refuses mutations with 405 and Allow: POST, and runs nothing', async () => {
  const { apiKey } = await seedAccount(t.app);
  const query = encodeURIComponent(
    'mutation { createApiKey(input: { name: "via-get" }) { secret } }',
  );
  const res = await fetch(`${t.url}/graphql?query=${query}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  // GraphQL over HTTP: a mutation over GET is 405 whatever the Accept (RFC 9110 §15.5.6).
  assert.equal(res.status, 405);
  assert.equal(res.headers.get('allow'), 'POST');
  const body = (await res.json()) as {
    errors: Array<{ message: string; extensions: { code: string } }>;
  };
  assert.equal(body.errors[0]?.extensions.code, '120001');
  assert.match(body.errors[0]?.message ?? '', /GET/);
  const listed = await graphql<{ listApiKeys: Array<{ name: string }> }>(t.url, {
    query: '{ listApiKeys { name } }',
    apiKey,
  });
  assert.equal(
    listed.body.data?.listApiKeys.some((k) => k.name === 'via-get'),
    false,
  );
});

it('operationName is required when the document has several operations (spec §4.1)', async () => {
  const { apiKey } = await seedAccount(t.app);
  const query = 'query A { getUserByPrivateId { id } } query B { listApiKeys { id } }';
  const without = await graphql(t.url, { query, apiKey });
  assert.equal(without.status, 200); // a request error under application/json (see over-http)
  assert.deepEqual(errorCodes(without), ['120001']);
  assert.match(without.body.errors?.[0]?.message ?? '', /operation name/i);

  const withName = await graphql<{ listApiKeys: unknown[] }>(t.url, {
    query,
    operationName: 'B',
    apiKey,
  });
  assert.equal(withName.status, 200);
  assert.equal(withName.body.data?.listApiKeys.length, 1);
});

it('a syntax or validation error is 120001 with a readable message', async () => {
  const syntax = await graphql(t.url, { query: '{ getUserByPrivateId { id }' });
  assert.equal(syntax.status, 200); // application/json; 400 for graphql-response+json (over-http)
  assert.deepEqual(errorCodes(syntax), ['120001']);
  const unknown = await graphql(t.url, { query: '{ getUserByPrivateId { password } }' });
  assert.equal(unknown.status, 200);
  assert.deepEqual(errorCodes(unknown), ['120001']);
  assert.match(unknown.body.errors?.[0]?.message ?? '', /password/);
});

it('an unexpected failure is 190000 with a request id; its detail stays in the log', async () => {
  const { apiKey } = await seedAccount(t.app);
  const accounts = t.app.services.accounts;
  const original = accounts.getProfile;
  // Fault injection: the service fails the way a bug would.
  accounts.getProfile = async () => {
    throw new Error('connection string postgres://admin:hunter2@db leaked');
  };
  try {
    const res = await graphql(t.url, {
      query: '{ getUserByPrivateId { id } }',
      apiKey,
      headers: { 'x-request-id': 'trace-me-42' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(errorCodes(res), ['190000']);
    const error = res.body.errors?.[0];
    assert.equal(error?.extensions?.requestId, 'trace-me-42');
    assert.equal(error?.extensions?.retryable, true);
    assert.equal(JSON.stringify(res.body).includes('hunter2'), false);
    assert.equal(res.headers.get('x-request-id'), 'trace-me-42');
    assert.match(t.logs(), /"reqId":"trace-me-42".*hunter2|hunter2.*"reqId":"trace-me-42"/);
  } finally {
    accounts.getProfile = original;
  }
});

it('every response carries a request id; an unsafe incoming one is replaced', async () => {
  const res = await fetch(`${t.url}/healthz`, {
    headers: { 'x-request-id': 'bad id with spaces' },
  });
  const id = res.headers.get('x-request-id') ?? '';
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
});

it('/healthz is alive and /readyz is ready with every migration applied', async () => {
  const health = await fetch(`${t.url}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  const ready = await fetch(`${t.url}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: 'ready' });
});

it('/readyz says 503 when the database is unreachable', async () => {
  const own = await createTestDatabase('pglite');
  const app = await startTestApp(own);
  try {
    await own.close();
    const res = await fetch(`${app.url}/readyz`);
    assert.equal(res.status, 503);
  } finally {
    await app.close();
  }
});
