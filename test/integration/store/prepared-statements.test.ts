import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { findAccountWithBalances } from '../../../src/store/account.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';

// The per-request reads of store/prepared.ts run on PGlite as PostgreSQL prepared statements,
// their values quoted into `EXECUTE` (issue 19). Whatever a value holds, it is a value.
describeEachBackend('prepared reads', (backend) => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase(backend);
  });
  after(() => database.close());

  const addAccount = async (id: string) => {
    await sql`insert into accounts (id, alias) values (${id}, ${`alias ${id}`})`.execute(
      database.db,
    );
    await sql`insert into credit_balances (account_id, category, amount) values (${id}, 'standard', 7)`.execute(
      database.db,
    );
  };

  it('find a row whose key holds quotes, backslashes and SQL, and only that row', async () => {
    const ids = [`o'brien`, `back\\slash\\'`, `x'); delete from accounts; --`, `plain`];
    for (const id of ids) await addAccount(id);
    for (const id of ids) {
      const found = await findAccountWithBalances(database.db, id);
      assert.equal(found?.id, id);
      assert.deepEqual(found?.balances, [{ category: 'standard', amount: 7 }]);
    }
    assert.equal(await findAccountWithBalances(database.db, `o''brien`), undefined);
    assert.equal(await findAccountWithBalances(database.db, `back\\slash`), undefined);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from accounts`.execute(
      database.db,
    );
    assert.equal(rows[0]!.n, ids.length, 'nothing was deleted');
    if (backend === 'pglite') {
      // Planned once: the read is a statement of PGlite's session, not a query parsed each time.
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(
        database.db,
      );
      assert.ok(prepared.rows.some((row) => row.name.startsWith('atelier_prepared_')));
    }
  });

  it('first used inside a transaction that rolls back, a read still works after it', async () => {
    const fresh = await createTestDatabase(backend);
    try {
      await addAccountOn(fresh, 'rolled');
      await fresh.db
        .transaction()
        .execute(async (trx) => {
          assert.equal((await findAccountWithBalances(trx, 'rolled'))?.id, 'rolled');
          throw new Error('roll back');
        })
        .catch(() => {});
      assert.equal((await findAccountWithBalances(fresh.db, 'rolled'))?.id, 'rolled');
    } finally {
      await fresh.close();
    }
  });

  it('after a migration changes what a read returns, it fails once at most, then answers anew', async () => {
    await addAccount('migrated');
    assert.equal((await findAccountWithBalances(database.db, 'migrated'))?.id, 'migrated');
    await sql`alter table accounts add column note text`.execute(database.db);
    try {
      const results = await Promise.allSettled([
        findAccountWithBalances(database.db, 'migrated'),
        findAccountWithBalances(database.db, 'migrated'),
      ]);
      const answered = results.filter((r) => r.status === 'fulfilled');
      assert.ok(answered.length >= 1, 'the second call answers');
      const last = await findAccountWithBalances(database.db, 'migrated');
      assert.equal(last?.id, 'migrated');
      assert.equal((last as { note?: unknown }).note, null, 'the new column is read');
    } finally {
      await sql`alter table accounts drop column note`.execute(database.db);
    }
  });
});

async function addAccountOn(database: Database, id: string): Promise<void> {
  await sql`insert into accounts (id, alias) values (${id}, ${`alias ${id}`})`.execute(database.db);
}
