import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

/** A raw socket speaking the protocol by hand, to see close codes the client library hides. */
function rawSocket(url: string, apiKey?: string) {
  const socket = new WebSocket(
    `${url.replace(/^http/, 'ws')}/graphql`,
    'graphql-transport-ws',
    apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : {},
  );
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  const opened = new Promise<void>((resolve) => socket.on('open', () => resolve()));
  return { socket, closed, opened };
}

describe('WebSocket limits and protocol close codes', () => {
  let t: TestApp;
  withTestApp('pglite', { webSocketLimits: { perConnection: 2, perAccount: 3 } }, (started) => {
    ({ t } = started);
  });

  it('closes with 4408 when connection_init does not come in time', async () => {
    const { closed } = rawSocket(t.url);
    assert.equal(await closed, 4408);
  });

  it('closes with 4429 on a second connection_init', async () => {
    const { apiKey } = await seedAccount(t.app);
    const raw = rawSocket(t.url, apiKey);
    await raw.opened;
    raw.socket.send(JSON.stringify({ type: 'connection_init' }));
    raw.socket.send(JSON.stringify({ type: 'connection_init' }));
    assert.equal(await raw.closed, 4429);
  });

  it('refuses a message over the size cap (1009)', async () => {
    const { apiKey } = await seedAccount(t.app);
    const raw = rawSocket(t.url, apiKey);
    await raw.opened;
    raw.socket.send(
      JSON.stringify({ type: 'connection_init', payload: { padding: 'x'.repeat(70_000) } }),
    );
    assert.equal(await raw.closed, 1009);
  });

  it('caps concurrent subscriptions per connection and per account (150029)', async () => {
    const { apiKey, account } = await seedAccount(t.app);
    /** The server's own signal that the account's nth operation started (or ended). */
    const nth = (msg: 'operation started' | 'operation ended', n: number) => {
      let seen = 0;
      return t.logged((e) => e.msg === msg && e.accountId === account.id && ++seen === n);
    };
    const query = 'subscription { myTaskUpdates { taskId } }';
    const first = wsClient(t.url, { apiKey });
    const second = wsClient(t.url, { apiKey });
    try {
      const running = [collect(first.client, query), collect(first.client, query)];
      const overConnection = collect(first.client, query);
      const outcome = await overConnection.finished;
      const errors =
        (outcome.error as Array<{ extensions?: { code?: string } }>) ??
        overConnection.results[0]?.errors;
      assert.equal(errors?.[0]?.extensions?.code, '150029');

      running.push(collect(second.client, query));
      await nth('operation started', 3);
      const overAccount = collect(second.client, query);
      const accountOutcome = await overAccount.finished;
      const accountErrors =
        (accountOutcome.error as Array<{ extensions?: { code?: string } }>) ??
        overAccount.results[0]?.errors;
      assert.equal(accountErrors?.[0]?.extensions?.code, '150029');

      // Ending one frees a place for the account.
      running[0]!.unsubscribe();
      await nth('operation ended', 1);
      const again = collect(second.client, query);
      let ended = false;
      void again.finished.then(() => {
        ended = true;
      });
      // Refusals happen before an operation starts: once started, it was not refused.
      await nth('operation started', 4);
      assert.equal(ended, false, 'the new subscription runs (it was not refused)');
      again.unsubscribe();
      for (const sub of running) sub.unsubscribe();
    } finally {
      await first.client.dispose();
      await second.client.dispose();
    }
  });
});
