import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { countContents, testModels } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

/** Text no edge accepts: PostgreSQL refuses NUL; a lone surrogate has no UTF-8 encoding. */
const hostile = [
  ['NUL', 'a kite\u0000'],
  ['a lone high surrogate', 'a kite \ud800'],
  ['a lone low surrogate', '\udfff'],
] as const;

const submit = `mutation S($input: GenerateImageInput!) {
  generateImage(input: $input) { contentId }
}`;
const listByKey = `query L($key: String) {
  listContents(filter: { idempotencyKey: $key }) { nodes { contentId } }
}`;
/** A GraphQL string literal for `text`: JSON's escapes (`\u0000`, `\ud800`) are GraphQL's. */
const literal = (text: string) => JSON.stringify(text);

/** Every way a client sends text: the refusal it must get (code and field). */
interface Refusal {
  code: string | undefined;
  field: unknown;
}

describeEachBackend('hostile text is 120001 naming the field, on every edge', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } }, (started) => {
    ({ database, t } = started);
  });

  const image = (extra: Record<string, unknown>) => ({
    modelId: 'mdl_test-fast',
    prompt: 'a kite',
    ...extra,
  });
  const contents = (accountId: string) => countContents(database, accountId);

  const graphqlRefusal = async (
    apiKey: string,
    request: { query: string; variables?: Record<string, unknown> },
  ): Promise<Refusal> => {
    const res = await graphql(t.url, { ...request, apiKey });
    const error = res.body.errors?.[0]?.extensions;
    return { code: error?.code, field: error?.field };
  };

  const wsRefusal = async (
    apiKey: string,
    request: { query: string; variables?: Record<string, unknown> },
  ): Promise<Refusal> => {
    const ws = wsClient(t.url, { apiKey });
    try {
      const run = collect(ws.client, request.query, request.variables);
      const outcome = await run.finished;
      const error =
        (outcome.error as Array<{ extensions?: Record<string, unknown> }> | undefined)?.[0] ??
        run.results[0]?.errors?.[0];
      return {
        code: error?.extensions?.code as string | undefined,
        field: error?.extensions?.field,
      };
    } finally {
      await ws.client.dispose();
    }
  };

  it('GraphQL over HTTP and WebSocket: variables (values and keys) and inline literals', async () => {
    const { apiKey, account } = await seedAccount(t.app);
    for (const [what, text] of hostile) {
      // GraphQL's own lexer refuses a surrogate escape ("\ud800") as a syntax error: 120001
      // with its location instead of a field. NUL escapes parse, and are named by the rule.
      const literalField = (field: string) => (text.includes('\u0000') ? field : undefined);
      const cases: Array<
        [string, { query: string; variables?: Record<string, unknown> }, string | undefined]
      > = [
        [
          'prompt variable',
          { query: submit, variables: { input: image({ prompt: text }) } },
          'input.prompt',
        ],
        [
          'idempotency key variable',
          { query: submit, variables: { input: image({ idempotencyKey: text }) } },
          'input.idempotencyKey',
        ],
        [
          'element id in a list',
          { query: submit, variables: { input: image({ elementIds: ['ok', text] }) } },
          'input.elementIds[1]',
        ],
        ['filter variable', { query: listByKey, variables: { key: text } }, 'key'],
        [
          'key name',
          { query: submit, variables: { input: { ...image({}), [`x${text}`]: 1 } } },
          `input.x${text.replaceAll('\u0000', '\uFFFD').toWellFormed()}`,
        ],
        [
          'prompt literal',
          {
            query: `mutation { generateImage(input: { modelId: "mdl_test-fast", prompt: ${literal(text)} }) { contentId } }`,
          },
          literalField('input.prompt'),
        ],
        [
          'filter literal',
          {
            query: `{ listContents(filter: { idempotencyKey: ${literal(text)} }) { nodes { contentId } } }`,
          },
          literalField('filter.idempotencyKey'),
        ],
      ];
      for (const [name, request, field] of cases) {
        for (const [edge, refusal] of [
          ['HTTP', graphqlRefusal],
          ['WebSocket', wsRefusal],
        ] as const) {
          assert.deepEqual(
            await refusal(apiKey, request),
            { code: '120001', field },
            `${what}, ${name}, ${edge}`,
          );
        }
      }
    }
    assert.equal(await contents(account.id), 0, 'nothing was submitted');
    // Well-formed text of every script still passes.
    const ok = await graphql(t.url, {
      query: submit,
      variables: { input: image({ prompt: 'ein Drache 🐉, 日本の凧', idempotencyKey: 'κλειδί' }) },
      apiKey,
    });
    assert.equal(ok.body.errors, undefined);
  });

  it('every other HTTP route: 400 with 120001 naming the field (RFC 6749 invalid_request on /oauth)', async () => {
    const json = (path: string, body: unknown) =>
      fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const [what, text] of hostile) {
      const cases: Array<[string, () => Promise<Response>, string]> = [
        [
          'sign-in email',
          () => json('/idp/sign-in', { email: `a${text}@example.test`, password: 'x-password' }),
          'email',
        ],
        [
          'sign-in password',
          () => json('/idp/sign-in', { email: 'a@example.test', password: `pass${text}word` }),
          'password',
        ],
        ['session token', () => json('/auth/session', { id_token: `e30${text}` }), 'id_token'],
        [
          'media id',
          () => fetch(`${t.url}/media/${encodeURIComponent('med_\u0000')}?exp=1&sig=x`),
          'mediaId',
        ],
      ];
      for (const [name, send, field] of cases) {
        if (name === 'media id' && what !== 'NUL') continue; // a URL's lone surrogate is not UTF-8
        const res = await send();
        assert.equal(res.status, 400, `${what}, ${name}`);
        const { error } = (await res.json()) as { error: { code: string; field: string } };
        assert.deepEqual([error.code, error.field], ['120001', field], `${what}, ${name}`);
      }
    }
    const authorize = await fetch(
      `${t.url}/oauth/authorize?response_type=code&client_id=atelier-local-tools&state=${encodeURIComponent('s\u0000')}`,
      { redirect: 'manual' },
    );
    assert.equal(authorize.status, 400);
    assert.equal(((await authorize.json()) as { error: string }).error, 'invalid_request');
  });

  it('GraphQL over GET: variables in the query string', async () => {
    const { apiKey } = await seedAccount(t.app);
    const url = new URL(`${t.url}/graphql`);
    url.searchParams.set('query', listByKey);
    url.searchParams.set('variables', JSON.stringify({ key: 'k\u0000' }));
    // A request error: 200 under application/json, 400 under the GraphQL response media type.
    for (const [accept, status] of [
      ['application/json', 200],
      ['application/graphql-response+json', 400],
    ] as const) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}`, accept } });
      assert.equal(res.status, status, accept);
      const body = (await res.json()) as {
        errors: Array<{ extensions: Record<string, unknown> }>;
      };
      assert.deepEqual(
        [body.errors[0]!.extensions.code, body.errors[0]!.extensions.field],
        ['120001', 'key'],
      );
    }
  });

  it('MCP tool arguments: the call is an isError result with 120001 and the field; nothing runs', async () => {
    const seeded = await seedAccount(t.app, { credits: { standard: 20 } });
    const client = await connectMcpClient(t, await mcpAccessToken(t, seeded.account.id));
    try {
      for (const [what, text] of hostile) {
        const calls: Array<[string, Record<string, unknown>, string]> = [
          [
            'generate_image',
            { model_id: 'mdl_test-fast', prompt: text, idempotency_key: 'k1' },
            'prompt',
          ],
          [
            'generate_image',
            { model_id: 'mdl_test-fast', prompt: 'a kite', idempotency_key: text },
            'idempotency_key',
          ],
          ['list_generations', { idempotency_key: text }, 'idempotency_key'],
          ['list_voice_models', { language: text }, 'language'],
        ];
        for (const [name, args, field] of calls) {
          const result = await client.callTool({ name, arguments: args });
          assert.equal(result.isError, true, `${what}, ${name}`);
          const [content] = result.content as Array<{ text: string }>;
          const { error } = JSON.parse(content!.text.split('\n')[1]!) as {
            error: { code: string; field: string };
          };
          assert.deepEqual([error.code, error.field], ['120001', field], `${what}, ${name}`);
        }
      }
    } finally {
      await client.close();
    }
    assert.equal(await contents(seeded.account.id), 0);
  });
});
