import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it, mock } from 'node:test';
import pg from 'pg';
import { PostgresChannel } from '../../../src/events/postgres-channel.ts';
import { postgresUrl } from '../../helpers/backends.ts';

// The channel that carries task events between processes on PostgreSQL. A notification sent
// while nothing is on its way goes at once; those that come while one is on its way wait for
// the statement to come back, then for `gather` (a time window in production, a gate here), and
// go together in the next statement; every one arrives, in the order published.

describe('a PostgreSQL channel sends a burst in one statement [postgres]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  const received: string[] = [];
  const waiters = new Set<() => void>();
  /** Resolves once `count` notifications have arrived at the listening connection. */
  const arrived = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (received.length < count) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  let gatherings = 0;
  let gatherCalled = Promise.withResolvers<void>();
  let letGo = Promise.withResolvers<void>();
  let channel: PostgresChannel;
  const statements = mock.method(pg.Pool.prototype, 'query');
  const notifyStatements = () =>
    statements.mock.calls.filter(
      (c) => (c.arguments[0] as { name?: string }).name === 'atelier_notify',
    ).length;

  before(async () => {
    channel = await PostgresChannel.open(
      postgresUrl!,
      `atelier_test_${randomBytes(4).toString('hex')}`,
      {
        message: (payload) => {
          received.push(payload);
          for (const check of [...waiters]) check();
        },
      },
      {
        gather: () => {
          gatherings += 1;
          gatherCalled.resolve();
          return letGo.promise;
        },
      },
    );
  });
  after(() => channel?.close());

  it('waits for gather only with a burst, and sends what gathered in one statement', async () => {
    const first = channel.notify('a');
    const second = channel.notify('b'); // published while 'a' is on its way: it waits
    await first;
    await Promise.race([
      gatherCalled.promise,
      second.then(() => assert.fail("'b' went without waiting for gather")),
    ]);
    assert.equal(notifyStatements(), 1, "'b' waits for gather, not sent on its own");
    const more = [channel.notify('c'), channel.notify('d')]; // join 'b' while it waits
    letGo.resolve();
    await Promise.all([second, ...more]);
    assert.equal(notifyStatements(), 2, "'b', 'c' and 'd' went in one statement");
    await arrived(4);
    assert.deepEqual(received, ['a', 'b', 'c', 'd']);

    // Nothing on its way: a lone notification goes at once, without gathering.
    gatherCalled = Promise.withResolvers<void>();
    letGo = Promise.withResolvers<void>();
    const gatheredSoFar = gatherings;
    await channel.notify('e');
    assert.equal(gatherings, gatheredSoFar);
    assert.equal(notifyStatements(), 3);
    await arrived(5);
    assert.deepEqual(received, ['a', 'b', 'c', 'd', 'e']);
  });
});
