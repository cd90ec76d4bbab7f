import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { auditServer } from 'graphql-http';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

const graphqlResponse = 'application/graphql-response+json';

describeEachBackend('GraphQL over HTTP', (backend) => {
  let database: Database;
  let t: TestApp;
  let apiKey: string;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, {
      env: { WORKER_CONCURRENCY: '0', MAX_BODY_BYTES: '8192' },
    });
    ({ apiKey } = await seedAccount(t.app));
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('passes every audit of graphql-http: MUST, SHOULD and MAY', async () => {
    const results = await auditServer({
      url: `${t.url}/graphql`,
      fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${apiKey}`);
        return fetch(input, { ...init, headers });
      },
    });
    const failures = results.flatMap((r) =>
      r.status === 'ok' ? [] : [`${r.id} ${r.status}: ${r.name} (${r.reason})`],
    );
    assert.ok(results.length > 50, `only ${results.length} audits ran`);
    assert.deepEqual(failures, []);
  });

  it('a request error is 400 without data for graphql-response+json, 200 for application/json', async () => {
    const query = '{ getUserByPrivateId { password } }';
    const strict = await graphql(t.url, { query, apiKey, headers: { accept: graphqlResponse } });
    assert.equal(strict.status, 400);
    assert.match(strict.headers.get('content-type') ?? '', /^application\/graphql-response\+json/);
    assert.equal('data' in strict.body, false);
    assert.deepEqual(errorCodes(strict), ['120001']);
    for (const accept of ['application/json', '*/*', undefined]) {
      const legacy = await graphql(t.url, {
        query,
        apiKey,
        ...(accept === undefined ? {} : { headers: { accept } }),
      });
      assert.equal(legacy.status, 200, String(accept));
      assert.match(legacy.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(legacy.body.data, null);
      assert.deepEqual(errorCodes(legacy), ['120001']);
    }
    // q-values decide: application/json preferred over graphql-response+json.
    const preferJson = await graphql(t.url, {
      query,
      apiKey,
      headers: { accept: `${graphqlResponse};q=0.5, application/json` },
    });
    assert.equal(preferJson.status, 200);
  });

  it('a successful answer has the negotiated media type', async () => {
    const res = await graphql<{ getUserByPrivateId: { id: string } }>(t.url, {
      query: '{ getUserByPrivateId { id } }',
      apiKey,
      headers: { accept: `${graphqlResponse}, application/json;q=0.9` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/graphql-response\+json/);
    assert.match(res.headers.get('content-type') ?? '', /charset=utf-8/);
    assert.match(res.body.data?.getUserByPrivateId.id ?? '', /^acc_/);
  });

  it('"extensions": null is accepted as no extensions', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query: '{ __typename }', extensions: null }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { data: { __typename: 'Query' } });
  });

  it('a mutation over GET is 405 with Allow: POST in both media types, and runs nothing', async () => {
    const query = encodeURIComponent(
      'mutation { createApiKey(input: { name: "via-get" }) { secret } }',
    );
    for (const accept of [graphqlResponse, 'application/json']) {
      const res = await fetch(`${t.url}/graphql?query=${query}`, {
        headers: { authorization: `Bearer ${apiKey}`, accept },
      });
      assert.equal(res.status, 405, accept);
      assert.equal(res.headers.get('allow'), 'POST');
      const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
      assert.equal(body.errors[0]?.extensions.code, '120001');
    }
    const keys = await graphql<{ listApiKeys: { name: string }[] }>(t.url, {
      query: '{ listApiKeys { name } }',
      apiKey,
    });
    assert.deepEqual(
      keys.body.data?.listApiKeys.map((k) => k.name),
      ['test'],
    );
  });

  it('a body whose parameters have the wrong types is 400 and runs nothing, not coerced', async () => {
    for (const [body, field] of [
      [{ query: ['mutation { createApiKey(input: { name: "coerced" }) { secret } }'] }, 'query'],
      [{ query: 0 }, 'query'],
      [{ query: '{ __typename }', operationName: 1 }, 'operationName'],
      [{ query: '{ __typename }', variables: [] }, 'variables'],
      [{ query: '{ __typename }', extensions: 'x' }, 'extensions'],
    ] as const) {
      for (const accept of [graphqlResponse, 'application/json']) {
        const res = await fetch(`${t.url}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${apiKey}`,
            accept,
          },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as {
          errors: { extensions: { code: string; field: string } }[];
        };
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.deepEqual(
          [answer.errors[0]?.extensions.code, answer.errors[0]?.extensions.field],
          ['120001', field],
        );
      }
    }
    const keys = await graphql<{ listApiKeys: { name: string }[] }>(t.url, {
      query: '{ listApiKeys { name } }',
      apiKey,
    });
    assert.ok(!keys.body.data?.listApiKeys.some((k) => k.name === 'coerced'));
  });

  it('a GET naming no operation of several, or an unknown one, is 120001 on operationName', async () => {
    const query = encodeURIComponent('query A { __typename } query B { __typename }');
    for (const [params, field] of [
      ['', 'operationName'],
      ['&operationName=C', 'operationName'],
    ] as const) {
      const res = await fetch(`${t.url}/graphql?query=${query}${params}`, {
        headers: { authorization: `Bearer ${apiKey}`, accept: graphqlResponse },
      });
      assert.equal(res.status, 400, params);
      const body = (await res.json()) as {
        errors: { message: string; extensions: { code: string; field: string } }[];
      };
      assert.deepEqual(
        [body.errors[0]?.extensions.code, body.errors[0]?.extensions.field],
        ['120001', field],
      );
      assert.doesNotMatch(body.errors[0]?.message ?? '', /Cannot read|null/);
    }
    const named = await fetch(`${t.url}/graphql?query=${query}&operationName=B`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    assert.deepEqual(await named.json(), { data: { __typename: 'Query' } });
  });

  it('401 for an invalid key and 413 for a body too large stay, whatever the Accept', async () => {
    for (const accept of [graphqlResponse, 'application/json']) {
      const refused = await graphql(t.url, {
        query: '{ __typename }',
        apiKey: `svc_${'x'.repeat(32)}`,
        headers: { accept },
      });
      assert.equal(refused.status, 401, accept);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
      assert.deepEqual(errorCodes(refused), ['100101']);
      assert.equal('data' in refused.body, accept !== graphqlResponse);

      const huge = await graphql(t.url, {
        query: 'query Q($x: String) { __typename }',
        variables: { x: 'x'.repeat(10_000) },
        apiKey,
        headers: { accept },
      });
      assert.equal(huge.status, 413, accept);
      assert.deepEqual(errorCodes(huge), ['150030']);
    }
  });
});
