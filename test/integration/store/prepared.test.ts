import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { insertAccount } from '../../../src/store/account.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { prepared } from '../../../src/store/prepared.ts';
import { createTestDatabase } from '../../helpers/database.ts';

describe('prepared: a query compiled once, run with new values', () => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase('pglite');
    for (const [id, alias] of [
      ['acc_prep_a', 'prep-a'],
      ['acc_prep_b', 'prep-b'],
    ]) {
      await insertAccount(database.db, {
        id: id!,
        alias: alias!,
        role: 'user',
        apiKeyAccess: false,
      });
    }
  });
  after(async () => {
    await database.close();
  });

  it('answers each call with its own values, on the database and in a transaction', async () => {
    const aliasOf = prepared(
      (db, id: string) => db.selectFrom('accounts').select('alias').where('id', '=', id),
      'placeholder:id',
    );
    assert.deepEqual(await aliasOf(database.db, 'acc_prep_a'), [{ alias: 'prep-a' }]);
    assert.deepEqual(await aliasOf(database.db, 'acc_prep_b'), [{ alias: 'prep-b' }]);
    assert.deepEqual(await aliasOf(database.db, 'acc_none'), []);
    const inTransaction = await database.db
      .transaction()
      .execute((trx) => aliasOf(trx, 'acc_prep_b'));
    assert.deepEqual(inTransaction, [{ alias: 'prep-b' }]);
  });

  it('refuses a builder whose parameters are not exactly its placeholders', () => {
    assert.throws(
      () =>
        prepared(
          (db, id: string) =>
            db
              .selectFrom('accounts')
              .select('alias')
              .where('id', '=', id)
              .where('status', '=', sql.val('active')),
          'placeholder:id',
        ),
      /parameters must be its placeholders/,
    );
  });
});
