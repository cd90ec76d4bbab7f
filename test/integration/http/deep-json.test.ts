import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { countContents, testModels } from '../../helpers/generation.ts';
import { mcpAccessToken } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 30 §3: JSON nested about 10,000 levels deep was HTTP 500 / 190000 with a stack trace on
// every edge: the check for NUL and lone surrogates recursed once per level. Now every edge
// answers 120001 (and a 4xx where it has a status), without recursing and without a stack.

const levels = 10_000;
/** `{"a":{"a":…1…}}`, written as text: JSON.stringify itself recurses and cannot make it. */
const deep = `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const deepArray = `${'['.repeat(levels)}${']'.repeat(levels)}`;

function assertNoStack(text: string) {
  assert.doesNotMatch(text, /RangeError|call stack|\n\s+at /, 'no stack trace reaches a client');
}

describe('deeply nested JSON is 120001 on every edge (issue 30)', () => {
  let t: TestApp;
  let database: Database;
  withTestApp('pglite', { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } }, (started) => {
    ({ t, database } = started);
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('GraphQL over HTTP: a request error, 120001 naming the variable', async () => {
    const { apiKey, account } = await seedAccount(t.app);
    for (const value of [deep, deepArray]) {
      const body = `{"query":"mutation S($input: GenerateImageInput!) { generateImage(input: $input) { contentId } }","variables":{"input":${value}}}`;
      for (const [accept, status] of [
        ['application/graphql-response+json', 400],
        ['application/json', 200],
      ] as const) {
        const res = await post('/graphql', body, { authorization: `Bearer ${apiKey}`, accept });
        const text = await res.text();
        assert.equal(res.status, status, text.slice(0, 300));
        assertNoStack(text);
        const { errors } = JSON.parse(text) as {
          errors: { message: string; extensions: Record<string, unknown> }[];
        };
        assert.equal(errors[0]!.extensions.code, '120001');
        assert.equal(errors[0]!.extensions.field, 'input');
        assert.match(errors[0]!.message, /nest(s|ed)? deeper than 64 levels/);
      }
    }
    assert.equal(await countContents(database, account.id), 0);
  });

  it('GraphQL over WebSocket: that operation’s error, and the socket stays open', async () => {
    const { apiKey } = await seedAccount(t.app);
    const socket = new WebSocket(
      `${t.url.replace(/^http/, 'ws')}/graphql`,
      'graphql-transport-ws',
      {
        headers: { authorization: `Bearer ${apiKey}` },
      },
    );
    const messages: { type: string; id?: string; payload?: unknown }[] = [];
    const next = (type: string) =>
      new Promise<{ payload?: unknown }>((resolve) => {
        const look = () => {
          const found = messages.find((m) => m.type === type);
          if (found === undefined) return;
          socket.off('message', look);
          resolve(found);
        };
        socket.on('message', look);
        look();
      });
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await once(socket, 'open');
    try {
      socket.send('{"type":"connection_init"}');
      await next('connection_ack');
      socket.send(
        `{"id":"1","type":"subscribe","payload":{"query":"query Q($x: String) { __typename }","variables":{"x":${deep}}}}`,
      );
      const { payload } = await next('error');
      const [error] = payload as { extensions: Record<string, unknown> }[];
      assert.deepEqual([error!.extensions.code, error!.extensions.field], ['120001', 'x']);
      assertNoStack(JSON.stringify(payload));
      socket.send('{"id":"2","type":"subscribe","payload":{"query":"{ __typename }"}}');
      assert.deepEqual((await next('next')).payload, { data: { __typename: 'Query' } });
    } finally {
      socket.close();
    }
  });

  it('/v1, /mcp, /idp/sign-in and /auth/session: 400 with 120001', async () => {
    const { apiKey, account } = await seedAccount(t.app);
    const token = await mcpAccessToken(t, account.id);
    const cases: [string, () => Promise<Response>, (body: unknown) => unknown][] = [
      [
        '/v1/images/generations',
        () =>
          post('/v1/images/generations', `{"model":"mdl_test-fast","prompt":"x","extra":${deep}}`, {
            authorization: `Bearer ${apiKey}`,
          }),
        (body) => (body as { error: { code: string } }).error.code,
      ],
      [
        '/mcp',
        () =>
          post(
            '/mcp',
            `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":${deep}}}`,
            { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' },
          ),
        (body) => (body as { error: { data: { code: string } } }).error.data.code,
      ],
      [
        '/idp/sign-in',
        () => post('/idp/sign-in', `{"email":"a@example.test","password":${deep}}`),
        (body) => (body as { error: { code: string } }).error.code,
      ],
      [
        '/auth/session',
        () => post('/auth/session', `{"id_token":${deepArray}}`),
        (body) => (body as { error: { code: string } }).error.code,
      ],
    ];
    for (const [edge, send, codeOf] of cases) {
      const res = await send();
      const text = await res.text();
      assert.equal(res.status, 400, `${edge}: ${text.slice(0, 300)}`);
      assertNoStack(text);
      assert.equal(codeOf(JSON.parse(text)), '120001', edge);
    }
    // In a tool's arguments it is that call's result, as every refused argument is.
    const call = await post(
      '/mcp',
      `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"generate_image","arguments":{"model_id":"mdl_test-fast","prompt":"x","seed":${deep}}}}`,
      { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' },
    );
    const text = await call.text();
    assert.equal(call.status, 200, text.slice(0, 300));
    assertNoStack(text);
    const { result } = JSON.parse(text) as {
      result: { isError: boolean; content: { text: string }[] };
    };
    assert.equal(result.isError, true);
    const { error } = JSON.parse(result.content[0]!.text.split('\n')[1]!) as {
      error: { code: string; field: string };
    };
    assert.deepEqual([error.code, error.field], ['120001', 'seed']);
    assert.equal(await countContents(database, account.id), 0);
  });
});
