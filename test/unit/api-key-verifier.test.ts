import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { generateApiKey } from '../../src/auth/api-key.ts';
import { ApiKeyVerifier } from '../../src/auth/api-key-verifier.ts';
import { type CredentialEvent, LocalCredentialEvents } from '../../src/events/credential-events.ts';
import { insertAccount } from '../../src/store/account.store.ts';
import { insertApiKey } from '../../src/store/api-key.store.ts';
import type { Database } from '../../src/store/database.ts';
import { TestClock } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/database.ts';

// The race no request over the wire can hit on purpose: a node reads a key just before its
// revocation commits, the eviction arrives while that read is in flight, and the read then
// lands in the cache. Here a query hook delivers the eviction at exactly that moment.

describe('ApiKeyVerifier: an eviction heard during a lookup wins', () => {
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
});
