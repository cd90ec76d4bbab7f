import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { findAccountWithBalances } from '../../../src/store/account.store.ts';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrator.ts';
import { describeEachBackend, postgresUrl } from '../../helpers/backends.ts';
import { createEmptyPostgresDatabase, createTestDatabase } from '../../helpers/database.ts';

// The per-request reads and the queue's statements run as PostgreSQL prepared statements
// (issue 19): named statements of node-postgres, and on PGlite `PREPARE` and an `EXECUTE` with
// the values quoted into it. Whatever a value holds, it is a value.
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
    // Planned once: the read is a prepared statement of the connection that ran it.
    const names = await database.db.transaction().execute(async (trx) => {
      await findAccountWithBalances(trx, 'plain');
      return sql<{
        name: string;
        statement: string;
      }>`select name, statement from pg_prepared_statements`.execute(trx);
    });
    assert.ok(
      names.rows.some(
        (row) => /^atelier_\d+/.test(row.name) && row.statement.includes('"accounts"."id" = $1'),
      ),
    );
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

  it('after a migration changes what a read returns, the next reads answer with the new column', async () => {
    await addAccount('migrated');
    // Read on every connection of the pool, so each has the statement prepared.
    await Promise.all(
      Array.from({ length: 5 }, () => findAccountWithBalances(database.db, 'migrated')),
    );
    await sql`alter table accounts add column note text`.execute(database.db);
    try {
      const reads = await Promise.all(
        Array.from({ length: 5 }, () => findAccountWithBalances(database.db, 'migrated')),
      );
      for (const read of reads) {
        assert.equal(read?.id, 'migrated');
        assert.equal((read as { note?: unknown }).note, null, 'the new column is read');
      }
    } finally {
      await sql`alter table accounts drop column note`.execute(database.db);
    }
    // And back: the column gone, the reads answer without it.
    const again = await findAccountWithBalances(database.db, 'migrated');
    assert.equal(again?.id, 'migrated');
    assert.equal('note' in (again as object), false);
  });

  it('inside a transaction, a read whose result changed fails with 0A000, and the next answers', async () => {
    await addAccount('in-transaction');
    await Promise.all(
      Array.from({ length: 5 }, () => findAccountWithBalances(database.db, 'in-transaction')),
    );
    await sql`alter table accounts add column remark text`.execute(database.db);
    try {
      await assert.rejects(
        database.db.transaction().execute((trx) => findAccountWithBalances(trx, 'in-transaction')),
        { code: '0A000' },
      );
      const read = await findAccountWithBalances(database.db, 'in-transaction');
      assert.equal((read as { remark?: unknown }).remark, null);
    } finally {
      await sql`alter table accounts drop column remark`.execute(database.db);
    }
  });
});

async function addAccountOn(database: Database, id: string): Promise<void> {
  await sql`insert into accounts (id, alias) values (${id}, ${`alias ${id}`})`.execute(database.db);
}

// Behind a pooler in transaction mode without prepared-statement support, an operator turns
// named statements off (DATABASE_PREPARED_STATEMENTS=false): the reads still answer, and no
// connection keeps a statement of Atelier's.
describe('prepared reads on PostgreSQL with named statements off', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  it('answer without leaving a prepared statement on the connection', async () => {
    const empty = await createEmptyPostgresDatabase();
    const database = await openDatabase({
      backend: 'postgres',
      url: empty.url,
      poolSize: 1,
      preparedStatements: false,
    });
    try {
      await migrateToLatest(database.db);
      await addAccountOn(database, 'unnamed');
      const names = await database.db.transaction().execute(async (trx) => {
        assert.equal((await findAccountWithBalances(trx, 'unnamed'))?.id, 'unnamed');
        return sql<{ name: string }>`select name from pg_prepared_statements`.execute(trx);
      });
      assert.deepEqual(names.rows, []);
    } finally {
      await database.close();
      await empty.drop();
    }
  });
});
