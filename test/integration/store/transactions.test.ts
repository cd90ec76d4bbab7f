import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { kindNames } from '../../../src/domain/kinds/kinds.ts';
import { newId } from '../../../src/shared/ids.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import { changeBalance, listBalances } from '../../../src/store/credit.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { isOverLimit, setSpendingLimits } from '../../../src/store/spending.store.ts';
import {
  insertSubmission,
  isOverdrawn,
  type NewSubmission,
} from '../../../src/store/submission.store.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';

async function newAccount(database: Database, credits: number): Promise<string> {
  const id = newId('acc');
  await insertAccount(database.db, { id, alias: id, role: 'user', apiKeyAccess: false });
  if (credits > 0) {
    await changeBalance(database.db, {
      accountId: id,
      category: 'standard',
      delta: credits,
      reason: 'grant',
      reference: null,
    });
  }
  return id;
}

async function grant(database: Database, accountId: string, category: string, credits: number) {
  await changeBalance(database.db, {
    accountId,
    category,
    delta: credits,
    reason: 'grant',
    reference: null,
  });
}

function newSubmission(accountId: string, debits: NewSubmission['debits']): NewSubmission {
  const id = newId('cnt');
  return {
    debits,
    content: {
      id,
      accountId,
      kind: 'image',
      modelId: 'mdl_test',
      input: { prompt: 'a submission' },
      inputHash: id,
      idempotencyKey: null,
      creditsCharged: debits.reduce((sum, d) => sum + d.amount, 0),
    },
    task: { id: newId('tsk'), maxAttempts: 3 },
  };
}

async function ledgerOf(database: Database, reference: string) {
  return database.db
    .selectFrom('credit_ledger')
    .select(['category', 'delta', 'balance_after', 'reason'])
    .where('reference', '=', reference)
    .orderBy('seq')
    .execute();
}

describeEachBackend('transactions and the credit ledger', (backend) => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase(backend);
  });
  after(() => database.close());

  it('20 concurrent debits against 10 credits: exactly 10 succeed, never below zero', async () => {
    const accountId = await newAccount(database, 10);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        database.db.transaction().execute(async (trx) => {
          const after = await changeBalance(trx, {
            accountId,
            category: 'standard',
            delta: -1,
            reason: 'debit',
            reference: `debit-${i}`,
          });
          await sleep(2); // hold the transaction open across an event-loop turn
          return after;
        }),
      ),
    );
    assert.equal(results.filter((r) => r !== undefined).length, 10);
    assert.deepEqual(await listBalances(database.db, accountId), [
      { category: 'standard', amount: 0 },
    ]);
    const ledger = await database.db
      .selectFrom('credit_ledger')
      .select(['delta', 'reason'])
      .where('account_id', '=', accountId)
      .execute();
    assert.equal(ledger.filter((r) => r.reason === 'debit').length, 10);
    assert.equal(
      ledger.reduce((sum, r) => sum + r.delta, 0),
      0,
      'the ledger sums to the balance',
    );
  });

  it('submissions past a spending limit fail in their own statement, changing nothing', async () => {
    const accountId = await newAccount(database, 100);
    const day = new Date('2011-03-14T00:00:00Z');
    const charged = (amount: number): NewSubmission => ({
      ...newSubmission(accountId, [{ category: 'standard', amount }]),
      spending: {
        spender: 'key_limited',
        at: new Date('2011-03-14T10:00:00Z'),
        charges: [{ category: 'standard', period: 'day', periodStart: day, amount, cap: 10 }],
      },
    });
    // No check before: only the statement stands between these and the cap.
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => insertSubmission(database.db, charged(3))),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    assert.equal(results.length - refused.length, 3);
    for (const r of refused) assert.ok(isOverLimit((r as PromiseRejectedResult).reason));
    assert.deepEqual(await listBalances(database.db, accountId), [
      { category: 'standard', amount: 91 },
    ]);
    const counter = await database.db
      .selectFrom('spending_counters')
      .select(['spent', 'cap'])
      .where('account_id', '=', accountId)
      .execute();
    assert.deepEqual(counter, [{ spent: 9, cap: 10 }]);
  });

  it('the database itself refuses a negative balance (CHECK constraint)', async () => {
    const accountId = await newAccount(database, 5);
    await assert.rejects(
      sql`UPDATE credit_balances SET amount = -1 WHERE account_id = ${accountId}`.execute(
        database.db,
      ),
      /check constraint/i,
    );
    assert.deepEqual(await listBalances(database.db, accountId), [
      { category: 'standard', amount: 5 },
    ]);
  });

  it('a failed transaction leaves neither balance nor ledger changed', async () => {
    const accountId = await newAccount(database, 5);
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await changeBalance(trx, {
          accountId,
          category: 'standard',
          delta: -3,
          reason: 'debit',
          reference: 'rolled back',
        });
        throw new Error('abort');
      }),
      /abort/,
    );
    assert.deepEqual(await listBalances(database.db, accountId), [
      { category: 'standard', amount: 5 },
    ]);
    const rolledBack = await database.db
      .selectFrom('credit_ledger')
      .select('id')
      .where('reference', '=', 'rolled back')
      .execute();
    assert.equal(rolledBack.length, 0);
  });
  it('a submission records its debits in plan order, its content and its queued task', async () => {
    const accountId = await newAccount(database, 5);
    await grant(database, accountId, 'promo', 2);
    const submission = newSubmission(accountId, [
      { category: 'promo', amount: 2 },
      { category: 'standard', amount: 1 },
    ]);
    await insertSubmission(database.db, submission);
    assert.deepEqual(await listBalances(database.db, accountId), [
      { category: 'promo', amount: 0 },
      { category: 'standard', amount: 4 },
    ]);
    assert.deepEqual(await ledgerOf(database, submission.content.id), [
      { category: 'promo', delta: -2, balance_after: 0, reason: 'debit' },
      { category: 'standard', delta: -1, balance_after: 4, reason: 'debit' },
    ]);
    const task = await database.db
      .selectFrom('tasks')
      .select(['id', 'status', 'account_id', 'max_attempts'])
      .where('content_id', '=', submission.content.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(task, {
      id: submission.task.id,
      status: 'queued',
      account_id: accountId,
      max_attempts: 3,
    });
  });

  it('a submission whose second debit overdraws changes nothing at all', async () => {
    const accountId = await newAccount(database, 5);
    await grant(database, accountId, 'promo', 2);
    const submission = newSubmission(accountId, [
      { category: 'standard', amount: 3 },
      { category: 'promo', amount: 4 },
    ]);
    const refused = await insertSubmission(database.db, submission).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(isOverdrawn(refused), `refused as overdrawn, got ${String(refused)}`);
    assert.deepEqual(await listBalances(database.db, accountId), [
      { category: 'promo', amount: 2 },
      { category: 'standard', amount: 5 },
    ]);
    assert.deepEqual(await ledgerOf(database, submission.content.id), []);
    const stored = await database.db
      .selectFrom('contents')
      .select('id')
      .where('account_id', '=', accountId)
      .execute();
    assert.deepEqual(stored, [], 'no content, and so no task');
  });

  it('a submission planned from assumed funds is written only where a read would allow it', async () => {
    const assumed = (accountId: string, category: string, spender: string, amount = 2) => ({
      ...newSubmission(accountId, [{ category, amount }]),
      spending: { spender, at: new Date('2011-03-14T10:00:00Z'), charges: [] },
      assumed: true,
    });
    const contentsOf = (accountId: string) =>
      database.db.selectFrom('contents').select('id').where('account_id', '=', accountId).execute();

    const funded = await newAccount(database, 5);
    const written = assumed(funded, 'standard', 'key_free');
    assert.equal(await insertSubmission(database.db, written), true);
    assert.deepEqual(await listBalances(database.db, funded), [
      { category: 'standard', amount: 3 },
    ]);
    assert.equal((await ledgerOf(database, written.content.id)).length, 1);

    // No balance row for the category: an UPDATE finding none must not make it free.
    assert.equal(await insertSubmission(database.db, assumed(funded, 'promo', 'key_free')), false);
    // A balance too small (3 left, 4 asked): refused as not written, not by a failed write.
    const short = assumed(funded, 'standard', 'key_free', 4);
    assert.equal(await insertSubmission(database.db, short), false);
    assert.deepEqual(await listBalances(database.db, funded), [
      { category: 'standard', amount: 3 },
    ]);
    // The credential has limits, which assumed funds did not plan against.
    const limited = await newAccount(database, 5);
    const limits = { credits: [], kinds: ['image' as const], modelIds: null };
    await setSpendingLimits(database.db, limited, 'key_limited', limits, new Date());
    assert.equal(
      await insertSubmission(database.db, assumed(limited, 'standard', 'key_limited')),
      false,
    );
    assert.deepEqual(await listBalances(database.db, limited), [
      { category: 'standard', amount: 5 },
    ]);
    assert.deepEqual(await contentsOf(limited), []);
    assert.deepEqual(await contentsOf(funded), [{ id: written.content.id }]);
    // Read funds are not checked again: the same submission is written when not assumed.
    const read = { ...assumed(limited, 'standard', 'key_limited'), assumed: false };
    assert.equal(await insertSubmission(database.db, read), true);
  });
});

describeEachBackend('concurrent transactions never interleave', (backend) => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase(backend);
    await sql`CREATE TABLE counter (n integer NOT NULL)`.execute(database.db);
    await sql`INSERT INTO counter VALUES (0)`.execute(database.db);
  });
  after(() => database.close());

  it('read-then-write increments under FOR UPDATE all land', async () => {
    // A lost update here would mean two transactions shared one connection (PGlite) or the
    // row lock did not hold (PostgreSQL).
    await Promise.all(
      Array.from({ length: 25 }, () =>
        database.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ n: number }>`SELECT n FROM counter FOR UPDATE`.execute(trx);
          await sleep(1);
          await sql`UPDATE counter SET n = ${(rows[0]?.n ?? 0) + 1}`.execute(trx);
        }),
      ),
    );
    const { rows } = await sql<{ n: number }>`SELECT n FROM counter`.execute(database.db);
    assert.equal(rows[0]?.n, 25);
  });

  it('a query outside a transaction never sees (or joins) its uncommitted writes', async () => {
    let seenInside: number | undefined;
    const writer = database.db.transaction().execute(async (trx) => {
      await sql`UPDATE counter SET n = -100`.execute(trx);
      await sleep(20);
      seenInside = (await sql<{ n: number }>`SELECT n FROM counter`.execute(trx)).rows[0]?.n;
      throw new Error('roll back');
    });
    await sleep(5);
    const outside = (await sql<{ n: number }>`SELECT n FROM counter`.execute(database.db)).rows[0]
      ?.n;
    await assert.rejects(writer, /roll back/);
    assert.equal(seenInside, -100);
    assert.equal(outside, 25, 'the outside read saw committed data only');
  });
});

describeEachBackend('the schema knows the kinds the code does', (backend) => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase(backend);
  });
  after(() => database.close());

  it('contents.kind allows exactly the generation kinds (a new kind needs a migration)', async () => {
    const { rows } = await sql<{ definition: string }>`
      SELECT pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c
      JOIN pg_class t ON t.oid = c.conrelid
      WHERE t.relname = 'contents' AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%kind%'`.execute(
      database.db,
    );
    assert.equal(rows.length, 1, 'one CHECK on contents.kind');
    const allowed = [...rows[0]!.definition.matchAll(/'([a-z]+)'/g)].map((m) => m[1]);
    assert.deepEqual(allowed.sort(), [...kindNames].sort());
  });
});
