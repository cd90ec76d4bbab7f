import assert from 'node:assert/strict';
import { EventEmitter, on } from 'node:events';
import { describe, it } from 'node:test';
import { buildSchema, type ExecutionResult, parse } from 'graphql';
import { createSharedSubscribe } from '../../src/edge/ws/shared-execution.ts';

const schema = buildSchema(`
  type Query { hello: String }
  type Update { id: ID! label(suffix: String): String flaky: String }
  type Subscription { updates: Update! }
`);

/** A source of events and a count of the resolver calls per field, as the WebSocket edge's. */
function setUp() {
  const bus = new EventEmitter();
  const calls = { label: 0, flaky: 0 };
  const rootValue = {
    updates: async function* () {
      for await (const [event] of on(bus, 'event')) yield event; // one object for everyone
    },
  };
  const fieldResolver = (
    source: Record<string, unknown>,
    args: { suffix?: string },
    _: unknown,
    info: { fieldName: string },
  ) => {
    if (info.fieldName === 'label') {
      calls.label++;
      return `${source.id}${args.suffix ?? ''}`;
    }
    if (info.fieldName === 'flaky') {
      calls.flaky++;
      throw new Error('flaky');
    }
    return source[info.fieldName];
  };
  const context = (accountId: string, requestId: string) => ({
    auth: {
      kind: 'actor',
      actor: { accountId, role: 'user', credential: { kind: 'api_key', apiKeyId: 'k' } },
    },
    requestId,
  });
  return { bus, calls, rootValue, fieldResolver, context };
}

describe('shared subscription execution', () => {
  it('executes one event once for subscriptions of the same operation and caller', async () => {
    const { bus, calls, rootValue, fieldResolver, context } = setUp();
    const subscribe = createSharedSubscribe();
    const start = (query: string, accountId: string, variableValues?: Record<string, unknown>) =>
      subscribe({
        schema,
        document: parse(query),
        rootValue,
        fieldResolver: fieldResolver as never,
        contextValue: context(accountId, query),
        variableValues,
      }) as Promise<AsyncIterableIterator<ExecutionResult>>;
    const same = 'subscription { updates { id label } }';
    const withSuffix = 'subscription S($s: String) { updates { id label(suffix: $s) } }';
    const streams = [
      await start(same, 'acc_a'),
      await start(same, 'acc_a'),
      await start(same, 'acc_b'),
      await start(withSuffix, 'acc_a', { s: '!' }),
      await start(withSuffix, 'acc_a', { s: '?' }),
    ];
    const next = streams.map((s) => s.next());
    // The emitter's listeners are added when each generator first runs.
    await new Promise((resolve) => setImmediate(resolve));
    bus.emit('event', { updates: { id: 'e1' } });
    const results = (await Promise.all(next)).map((r) => r.value);
    assert.deepEqual(JSON.parse(JSON.stringify(results.map((r) => r.data?.updates))), [
      { id: 'e1', label: 'e1' },
      { id: 'e1', label: 'e1' },
      { id: 'e1', label: 'e1' },
      { id: 'e1', label: 'e1!' },
      { id: 'e1', label: 'e1?' },
    ]);
    // Shared by the first two only: another account, or other variables, execute their own.
    assert.equal(calls.label, 4);
    assert.equal(results[0], results[1]);
    for (const s of streams) await s.return?.();
  });

  it('a result with errors is not shared: each subscription executes its own', async () => {
    const { bus, calls, rootValue, fieldResolver, context } = setUp();
    const subscribe = createSharedSubscribe();
    const query = 'subscription { updates { id flaky } }';
    const streams = await Promise.all(
      ['ws:1', 'ws:2', 'ws:3'].map(
        (requestId) =>
          subscribe({
            schema,
            document: parse(query),
            rootValue,
            fieldResolver: fieldResolver as never,
            contextValue: context('acc_a', requestId),
          }) as Promise<AsyncIterableIterator<ExecutionResult>>,
      ),
    );
    const next = streams.map((s) => s.next());
    await new Promise((resolve) => setImmediate(resolve));
    bus.emit('event', { updates: { id: 'e1' } });
    const results = (await Promise.all(next)).map((r) => r.value);
    assert.equal(calls.flaky, 3);
    for (const r of results) assert.equal(r.errors?.[0]?.message, 'flaky');
    for (const s of streams) await s.return?.();
  });

  it('return() ends the source at once, even while it waits for an event', async () => {
    const { rootValue, fieldResolver, context } = setUp();
    let ended = false;
    const waiting = {
      updates: () => {
        const source: AsyncIterableIterator<unknown> = {
          next: () => new Promise(() => {}),
          return: async () => {
            ended = true;
            return { value: undefined, done: true };
          },
          [Symbol.asyncIterator]: () => source,
        };
        return source;
      },
    };
    const stream = (await createSharedSubscribe()({
      schema,
      document: parse('subscription { updates { id } }'),
      rootValue: { ...rootValue, ...waiting },
      fieldResolver: fieldResolver as never,
      contextValue: context('acc_a', 'ws:1'),
    })) as AsyncIterableIterator<ExecutionResult>;
    void stream.next();
    assert.deepEqual(await stream.return?.(), { value: undefined, done: true });
    assert.equal(ended, true);
  });
});
