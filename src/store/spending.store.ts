import { sql } from 'kysely';
import type { GenerationKind } from '../domain/model.ts';
import type { CreditLimit, LimitPeriod, SpendingLimits } from '../domain/spending-limits.ts';
import type { Queryable } from './database.ts';

/** Spending limits of an account's credentials, and what each has spent per period. */

/** PostgreSQL's check_violation on `spent <= cap`: a charge met a limit already spent. */
export function isOverLimit(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23514' && e.constraint === 'spending_counters_within_cap';
}

export interface SpenderLimits extends SpendingLimits {
  readonly spender: string;
}

/** The limits of every spender of the account that has any. */
export async function listSpendingLimits(
  q: Queryable,
  accountId: string,
  spender?: string,
): Promise<SpenderLimits[]> {
  let query = q
    .selectFrom('spending_limits')
    .select(['spender', 'credits', 'kinds', 'model_ids'])
    .where('account_id', '=', accountId);
  if (spender !== undefined) query = query.where('spender', '=', spender);
  const rows = await query.execute();
  return rows.map((row) => ({ spender: row.spender, ...limitsOf(row) }));
}

/** The limits a `spending_limits` row holds. */
export function limitsOf(row: {
  credits: unknown;
  kinds: string[] | null;
  model_ids: string[] | null;
}): SpendingLimits {
  return {
    credits: row.credits as CreditLimit[],
    kinds: row.kinds as GenerationKind[] | null,
    modelIds: row.model_ids,
  };
}

/** Sets (or with `null` removes) a spender's limits; its counters stay, as history. */
export async function setSpendingLimits(
  q: Queryable,
  accountId: string,
  spender: string,
  limits: SpendingLimits | null,
  at: Date,
): Promise<void> {
  if (limits === null) {
    await q
      .deleteFrom('spending_limits')
      .where('account_id', '=', accountId)
      .where('spender', '=', spender)
      .execute();
    return;
  }
  const values = {
    credits: JSON.stringify(limits.credits),
    kinds: limits.kinds === null ? null : [...limits.kinds],
    model_ids: limits.modelIds === null ? null : [...limits.modelIds],
    updated_at: at,
  };
  await q
    .insertInto('spending_limits')
    .values({ account_id: accountId, spender, ...values })
    .onConflict((oc) => oc.columns(['account_id', 'spender']).doUpdateSet(values))
    .execute();
}

/** What a spender counter holds for one period. */
export interface SpentRow {
  readonly spender: string;
  readonly category: string;
  readonly period: LimitPeriod;
  readonly spent: number;
}

/**
 * What the account's spenders have spent in the periods starting at `dayStart` and
 * `monthStart` (the current ones).
 */
export async function spentIn(
  q: Queryable,
  accountId: string,
  periods: { readonly day: Date; readonly month: Date },
  spender?: string,
): Promise<SpentRow[]> {
  let query = q
    .selectFrom('spending_counters')
    .select(['spender', 'category', 'period', 'spent'])
    .where('account_id', '=', accountId)
    .where((eb) =>
      eb.or([
        eb.and([eb('period', '=', 'day'), eb('period_start', '=', periods.day)]),
        eb.and([eb('period', '=', 'month'), eb('period_start', '=', periods.month)]),
      ]),
    );
  if (spender !== undefined) query = query.where('spender', '=', spender);
  return query.execute();
}

/**
 * Returns what a refunded content's submission added to its spender's counters, in the
 * periods it was spent in. Runs in the refund's transaction, so once.
 */
export async function refundSpending(
  q: Queryable,
  contentId: string,
  refunds: readonly { readonly category: string; readonly amount: number }[],
): Promise<void> {
  if (refunds.length === 0) return;
  await sql`
    UPDATE spending_counters s SET spent = greatest(0, s.spent - r.amount)
    FROM contents c, unnest(
      ${refunds.map((r) => r.category)}::text[], ${refunds.map((r) => r.amount)}::integer[]
    ) AS r(category, amount)
    WHERE c.id = ${contentId} AND c.spender IS NOT NULL
      AND s.account_id = c.account_id AND s.spender = c.spender AND s.category = r.category
      AND s.period_start = date_trunc(s.period, c.spent_at, 'UTC')`.execute(q);
}
