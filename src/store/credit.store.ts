import { sql } from 'kysely';
import { newId } from '../shared/ids.ts';
import type { Queryable } from './database.ts';
import type { CreditLedgerTable } from './schema.ts';
import { refundSpending } from './spending.store.ts';

export interface CreditBalanceRow {
  category: string;
  amount: number;
}

export interface BalanceChange {
  accountId: string;
  category: string;
  /** Positive adds credits, negative takes them; never zero. */
  delta: number;
  reason: CreditLedgerTable['reason'];
  /** What the change is for (a content ID, an operator note); used to find refunds later. */
  reference: string | null;
  /** A credit that would bring the balance above this changes nothing (returns `undefined`). */
  max?: number;
}

export async function listBalances(q: Queryable, accountId: string): Promise<CreditBalanceRow[]> {
  return q
    .selectFrom('credit_balances')
    .select(['category', 'amount'])
    .where('account_id', '=', accountId)
    .orderBy('category')
    .execute();
}

/**
 * Changes one balance and writes its ledger row, in one statement: the two stand or fall
 * together. A debit larger than the balance, or a credit above `max`, changes nothing and
 * returns `undefined`: the guard is in the UPDATE itself, so concurrent debits cannot overdraw
 * (and the table's CHECK would refuse it anyway).
 */
export async function changeBalance(
  q: Queryable,
  change: BalanceChange,
): Promise<number | undefined> {
  if (!Number.isInteger(change.delta) || change.delta === 0) {
    throw new RangeError(`A balance change must be a non-zero integer, got ${change.delta}`);
  }
  const row = await q
    .with('changed', (w) =>
      change.delta > 0
        ? w
            .insertInto('credit_balances')
            .values({
              account_id: change.accountId,
              category: change.category,
              amount: change.delta,
            })
            .onConflict((oc) => {
              const update = oc
                .columns(['account_id', 'category'])
                .doUpdateSet((eb) => ({ amount: eb('credit_balances.amount', '+', change.delta) }));
              // Compared as bigint, so the sum itself can never overflow the integer column.
              return change.max === undefined
                ? update
                : update.where(
                    sql<boolean>`credit_balances.amount::bigint + ${change.delta} <= ${change.max}`,
                  );
            })
            .returning('amount')
        : w
            .updateTable('credit_balances')
            .set((eb) => ({ amount: eb('amount', '+', change.delta) }))
            .where('account_id', '=', change.accountId)
            .where('category', '=', change.category)
            .where('amount', '>=', -change.delta)
            .returning('amount'),
    )
    .insertInto('credit_ledger')
    .columns(['id', 'account_id', 'category', 'delta', 'balance_after', 'reason', 'reference'])
    .expression((eb) =>
      eb.selectFrom('changed').select([
        // Typed: parameters in a select list would otherwise arrive as text.
        sql<string>`${newId('led')}::text`.as('id'),
        sql<string>`${change.accountId}::text`.as('account_id'),
        sql<string>`${change.category}::text`.as('category'),
        sql<number>`${change.delta}::integer`.as('delta'),
        'changed.amount',
        sql<string>`${change.reason}::text`.as('reason'),
        sql<string | null>`${change.reference}::text`.as('reference'),
      ]),
    )
    .returning('balance_after')
    .executeTakeFirst();
  return row?.balance_after;
}

/**
 * Returns to the balances exactly what the content's submission debited, by category, and
 * to the limits of the credential that spent it; records it on the content. Call it in the transaction that finishes the task with a
 * non-zero code: that transition happens once, so the refund does too.
 */
export async function refundContent(
  q: Queryable,
  accountId: string,
  contentId: string,
): Promise<number> {
  const debits = await q
    .selectFrom('credit_ledger')
    .select(['category', (eb) => eb.fn.sum<number>('delta').as('total')])
    .where('reference', '=', contentId)
    .where('account_id', '=', accountId)
    .where('reason', '=', 'debit')
    .groupBy('category')
    .orderBy('category')
    .execute();
  let refunded = 0;
  const returned: { category: string; amount: number }[] = [];
  for (const debit of debits) {
    const amount = -Number(debit.total);
    if (amount <= 0) continue;
    returned.push({ category: debit.category, amount });
    await changeBalance(q, {
      accountId,
      category: debit.category,
      delta: amount,
      reason: 'refund',
      reference: contentId,
    });
    refunded += amount;
  }
  await refundSpending(q, contentId, returned);
  await q
    .updateTable('contents')
    .set({ credits_refunded: refunded })
    .where('id', '=', contentId)
    .execute();
  return refunded;
}

/** Balances of the account as a map, read with row locks when inside a transaction that debits. */
export async function lockBalances(q: Queryable, accountId: string): Promise<Map<string, number>> {
  return balanceMap(await balancesQuery(q, accountId).forUpdate().execute());
}

function balancesQuery(q: Queryable, accountId: string) {
  return q
    .selectFrom('credit_balances')
    .select(['category', 'amount'])
    .where('account_id', '=', accountId);
}

function balanceMap(rows: readonly CreditBalanceRow[]): Map<string, number> {
  return new Map(rows.map((r) => [r.category, r.amount]));
}

/** What was refunded for a content, by category (an empty list when nothing was). */
export async function refundsOfContent(
  q: Queryable,
  accountId: string,
  contentId: string,
): Promise<CreditBalanceRow[]> {
  const rows = await q
    .selectFrom('credit_ledger')
    .select(['category', (eb) => eb.fn.sum<number>('delta').as('amount')])
    .where('reference', '=', contentId)
    .where('account_id', '=', accountId)
    .where('reason', '=', 'refund')
    .groupBy('category')
    .orderBy('category')
    .execute();
  return rows.map((r) => ({ category: r.category, amount: Number(r.amount) }));
}
