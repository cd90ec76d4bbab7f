import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { generateApiKey } from '../../../src/auth/api-key.ts';
import { ApiKeyVerifier } from '../../../src/auth/api-key-verifier.ts';
import {
  type CredentialEvent,
  LocalCredentialEvents,
} from '../../../src/events/credential-events.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import { insertApiKey } from '../../../src/store/api-key.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { TestClock } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';

// The race no request over the wire can hit on purpose: a node reads a key just before its
// revocation commits, the eviction arrives while that read is in flight, and the read then
// lands in the cache. Here a query hook delivers the eviction at exactly that moment.

describe('ApiKeyVerifier: what the cache may answer', () => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase('pglite');
  });
  after(async () => {
    await database.close();
  });

  it('a key read before its revocation is not cached once the eviction has arrived', async () => {
    await insertAccount(database.db, {
      id: 'acc_race',
      alias: 'race',
      role: 'user',
      apiKeyAccess: true,
    });
    const key = generateApiKey();
    await insertApiKey(database.db, {
      id: 'key_race',
      accountId: 'acc_race',
      name: 'race',
      prefix: key.prefix,
      secretHash: key.secretHash,
      expiresAt: null,
    });
    const changes = new LocalCredentialEvents();
    let duringRead: CredentialEvent | null = null;
    let reads = 0;
    const hook: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        reads += 1;
        // The row is read; the revocation commits and its notification arrives now.
        if (duringRead !== null) changes.deliver(duringRead);
        duringRead = null;
        return args.result;
      },
    };
    const verifier = new ApiKeyVerifier({
      db: database.db.withPlugin(hook),
      clock: new TestClock(),
      changes,
    });

    duringRead = { type: 'api_key_revoked', apiKeyId: 'key_race' };
    assert.notEqual(await verifier.verify(key.secret), null, 'concurrent with the revocation');
    await database.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', 'key_race')
      .execute();
    const readsBefore = reads;
    assert.equal(await verifier.verify(key.secret), null, 'the next request is refused');
    assert.ok(reads > readsBefore, 'it asked the database, not the cache');

    // Without a change in flight, a valid key is cached (no read on the next call).
    const other = generateApiKey();
    await insertApiKey(database.db, {
      id: 'key_calm',
      accountId: 'acc_race',
      name: 'calm',
      prefix: other.prefix,
      secretHash: other.secretHash,
      expiresAt: null,
    });
    assert.notEqual(await verifier.verify(other.secret), null);
    const readsCached = reads;
    assert.notEqual(await verifier.verify(other.secret), null);
    assert.equal(reads, readsCached, 'served from the cache');
  });

  it('an expired key, a revoked key and an unknown key each cost one lookup, cached or not', async () => {
    await insertAccount(database.db, {
      id: 'acc_paths',
      alias: 'paths',
      role: 'user',
      apiKeyAccess: true,
    });
    const clock = new TestClock();
    const expiring = generateApiKey();
    const revoked = generateApiKey();
    for (const [id, key, expiresAt] of [
      ['key_expiring', expiring, new Date(clock.now().getTime() + 1_000)],
      ['key_revoked', revoked, null],
    ] as const) {
      await insertApiKey(database.db, {
        id,
        accountId: 'acc_paths',
        name: id,
        prefix: key.prefix,
        secretHash: key.secretHash,
        expiresAt,
      });
    }
    let reads = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        reads += 1;
        return args.result;
      },
    };
    const changes = new LocalCredentialEvents();
    const verifier = new ApiKeyVerifier({
      db: database.db.withPlugin(counting),
      clock,
      changes,
      touchIntervalMs: 3_600_000, // one touch per key in this test, before the counting
    });
    // Both keys work and are cached (the touch is their first and last write here).
    assert.notEqual(await verifier.verify(expiring.secret), null);
    assert.notEqual(await verifier.verify(revoked.secret), null);
    await database.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', 'key_revoked')
      .execute();
    changes.deliver({ type: 'api_key_revoked', apiKeyId: 'key_revoked' });
    clock.advance(2_000); // expired, well within the 10-second TTL

    const cost = async (secret: string) => {
      const before = reads;
      assert.equal(await verifier.verify(secret), null);
      return reads - before;
    };
    assert.deepEqual(
      {
        expired: await cost(expiring.secret),
        revoked: await cost(revoked.secret),
        unknown: await cost(generateApiKey().secret),
      },
      { expired: 1, revoked: 1, unknown: 1 },
    );
  });
});
