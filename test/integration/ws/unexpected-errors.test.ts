import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

// An error nobody expected is logged once, under the request id the client is given, and
// answered as 190000 with that id and nothing of the error itself — over HTTP and over the
// WebSocket, before execution as well as during it (STYLE habit 6).

type Me = { getUserByPrivateId: { id: string } };
const me = '{ getUserByPrivateId { id } }';

describeEachBackend('unexpected errors at the GraphQL edges', (backend) => {
  let t: TestApp;
  withTestApp(backend, {}, (started) => {
    ({ t } = started);
  });

  /** Log lines holding `marker`: the injected error's own text appears only where it is logged. */
  const loggedWith = (marker: string) =>
    t
      .logs()
      .split('\n')
      .filter((line) => line.includes(marker))
      .map((line) => JSON.parse(line) as { requestId?: string; reqId?: string });

  /** Makes `object[method]` throw `message` until the returned function puts it back. */
  function inject<T extends object>(object: T, method: keyof T, message: string): () => void {
    const original = object[method];
    object[method] = (async () => {
      throw new Error(message);
    }) as T[keyof T];
    return () => {
      object[method] = original;
    };
  }

  it('over HTTP: 190000 with the request id, logged once', async () => {
    const { apiKey } = await seedAccount(t.app);
    const marker = 'driver internals http-1';
    const restore = inject(t.app.services.accounts, 'getProfile', marker);
    try {
      const res = await graphql(t.url, {
        query: me,
        apiKey,
        headers: { 'x-request-id': 'unexpected-http-1' },
      });
      const error = res.body.errors?.[0];
      assert.equal(error?.extensions?.code, '190000');
      assert.equal(error?.extensions?.requestId, 'unexpected-http-1');
      assert.doesNotMatch(JSON.stringify(res.body), /driver internals/);
      const lines = loggedWith(marker);
      assert.equal(lines.length, 1, 'logged once');
      assert.equal(lines[0]!.requestId, 'unexpected-http-1');
    } finally {
      restore();
    }
  });

  it('over the WebSocket, during execution: 190000 with the request id, logged once', async () => {
    const { apiKey } = await seedAccount(t.app);
    const ws = wsClient(t.url, { apiKey });
    const marker = 'driver internals ws-execution';
    const restore = inject(t.app.services.accounts, 'getProfile', marker);
    try {
      const op = collect<Me>(ws.client, me);
      await op.finished;
      const error = op.results[0]?.errors?.[0] as { extensions?: Record<string, unknown> };
      assert.equal(error.extensions?.code, '190000');
      assert.match(String(error.extensions?.requestId), /^ws:/);
      assert.doesNotMatch(JSON.stringify(op.results), /driver internals/);
      const lines = loggedWith(marker);
      assert.equal(lines.length, 1, 'logged once');
      assert.equal(lines[0]!.requestId, error.extensions?.requestId);
    } finally {
      restore();
      await ws.client.dispose();
    }
  });

  it('over the WebSocket, before execution: that operation fails with 190000, the socket stays', async () => {
    const { account, apiKey } = await seedAccount(t.app);
    const ws = wsClient(t.url, { apiKey });
    try {
      await collect<Me>(ws.client, me).finished; // connected and authenticated
      const marker = 'driver internals ws-subscribe';
      const restore = inject(t.app.services.graphqlAuth, 'authenticate', marker);
      let failed: { error?: unknown };
      try {
        failed = await collect<Me>(ws.client, me).finished;
      } finally {
        restore();
      }
      const [error] = failed.error as { message: string; extensions?: Record<string, unknown> }[];
      assert.equal(error?.extensions?.code, '190000');
      assert.match(String(error?.extensions?.requestId), /^ws:/);
      assert.doesNotMatch(JSON.stringify(failed.error), /driver internals/);
      const lines = loggedWith(marker);
      assert.equal(lines.length, 1, 'logged once');
      assert.equal(lines[0]!.requestId, error?.extensions?.requestId);

      const next = collect<Me>(ws.client, me);
      await next.finished;
      assert.equal(next.results[0]?.data?.getUserByPrivateId.id, account.id);
    } finally {
      await ws.client.dispose();
    }
  });

  it('over the WebSocket, at connection_init: close 4500 with 190000, logged once', async () => {
    const { apiKey } = await seedAccount(t.app);
    const marker = 'driver internals ws-connect';
    const restore = inject(t.app.services.graphqlAuth, 'authenticate', marker);
    const ws = wsClient(t.url, { apiKey });
    try {
      const closed = await ws.closed;
      assert.equal(closed.code, 4500);
      assert.equal(closed.reason, '190000: Internal error');
      const lines = loggedWith(marker);
      assert.equal(lines.length, 1, 'logged once');
      assert.match(String(lines[0]!.requestId), /^ws:/);
    } finally {
      restore();
      await ws.client.dispose();
    }
  });
});
