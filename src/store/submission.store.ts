import { sql } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { DebitPart } from '../domain/credits.ts';
import type { SpendingLimits, SpendingPlan } from '../domain/spending-limits.ts';
import { newId } from '../shared/ids.ts';
import type { NewContentRow } from './content.store.ts';
import { lockBalances } from './credit.store.ts';
import type { Queryable } from './database.ts';
import { executeNamed, prepared } from './prepared.ts';
import { limitsOf, listSpendingLimits } from './spending.store.ts';

/** PostgreSQL's check_violation on `credit_balances.amount >= 0`: a debit met too small a balance. */
const overdrawn = { code: '23514', constraint: 'credit_balances_amount_check' };

/** Whether `error` is a submission refused because a balance had fallen below its debit. */
export function isOverdrawn(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === overdrawn.code && e.constraint === overdrawn.constraint;
}

/** What a submission is planned from: the account's balances and the credential's limits. */
export interface Funds {
  readonly balances: ReadonlyMap<string, number>;
  /** The submitting credential's limits; undefined when it has none. */
  readonly limits: SpendingLimits | undefined;
  /** Not read but assumed ({@link assumedFunds}): the submission statement checks them. */
  readonly assumed?: true;
}

/**
 * Funds to plan `debit` from without reading them, saving a round trip: as if each of its
 * categories held exactly its part and the credential had no limits. A submission planned from
 * them is written only when the credential has no limits and each category's balance covers
 * its part (`insertSubmission`); otherwise nothing is written, and no error is raised, so a
 * refusal for too few credits costs no failed write.
 */
export function assumedFunds(debit: readonly DebitPart[]): Funds {
  return {
    balances: new Map(debit.map((d) => [d.category, d.amount])),
    limits: undefined,
    assumed: true,
  };
}

const fundsOf = prepared(
  (db, balancesOf: string, limitsOf: string, spender: string) =>
    db.selectNoFrom((eb) => [
      jsonArrayFrom(
        eb
          .selectFrom('credit_balances')
          .select(['category', 'amount'])
          .where('account_id', '=', balancesOf),
      ).as('balances'),
      jsonObjectFrom(
        eb
          .selectFrom('spending_limits')
          .select(['credits', 'kinds', 'model_ids'])
          .where('account_id', '=', limitsOf)
          .where('spender', '=', spender),
      ).as('limits'),
    ]),
  'placeholder:balances',
  'placeholder:limits',
  'placeholder:spender',
);

/**
 * The balances as last committed (no locks) and the limits of `spender` (`spenderOf`; none for
 * `null`), in one round trip: a submission is planned from them.
 */
export async function readFunds(
  q: Queryable,
  accountId: string,
  spender: string | null,
): Promise<Funds> {
  // '' is no credential's: an ID token's submission reads no limits.
  const [row] = await fundsOf(q, accountId, accountId, spender ?? '');
  const limits = row?.limits ?? null;
  return {
    balances: new Map(row?.balances.map((b) => [b.category, b.amount])),
    limits: limits === null || spender === null ? undefined : limitsOf(limits),
  };
}

/** {@link readFunds} with the account's balance rows locked until the transaction ends. */
export async function lockFunds(
  q: Queryable,
  accountId: string,
  spender: string | null,
): Promise<Funds> {
  const balances = await lockBalances(q, accountId);
  const [limits] = spender === null ? [] : await listSpendingLimits(q, accountId, spender);
  return { balances, limits };
}

export interface NewSubmission {
  /** What to take from which balance of the content's account (none for a free model). */
  readonly debits: readonly DebitPart[];
  readonly content: NewContentRow;
  readonly task: {
    readonly id: string;
    readonly maxAttempts: number;
    /** The submission's W3C trace context, for the worker's spans; null when untraced. */
    readonly traceContext?: Readonly<Record<string, string>> | null;
  };
  /**
   * The credential charged (`spenderOf`) and what the debit adds to each of its limits; the
   * statement fails on `spending_counters_within_cap` (`isOverLimit`) when one would be
   * exceeded. Left out: nothing is charged to a credential's limits.
   */
  readonly spending?: SpendingPlan;
  /**
   * Planned from {@link assumedFunds}: the statement writes nothing unless the spender (`''`
   * for none) has no limits and every debited category has a balance row covering its part.
   */
  readonly assumed?: boolean;
}

/**
 * Records a submission in one statement, so all of it stands or none does: each debit and its
 * ledger row (reason `debit`, the content as reference), what it adds to the credential's
 * spending counters, the content, and its queued task.
 *
 * The task's `fair_key` is its place in its pool's order (start-time fair queuing): the key
 * of the pool's last started run (else of its next queued task), or one past the account's own
 * last queued task of the pool if that is later. An account with 500 tasks queued holds keys
 * far ahead; another account's first task takes the key of the runs under way, so it starts at
 * the next free slot, before the rest of the 500 (issue 31 §3). Tasks of one key go oldest
 * first.
 *
 * A debit larger than its balance makes the whole statement fail on the balance's CHECK
 * (`isOverdrawn`), changing nothing; the caller then plans again. Balances planned from a read
 * without locks are safe this way: the UPDATE subtracts from the row as committed, and a
 * balance row, once created, is never deleted, so every planned debit finds its row. A
 * submission planned without a read checks the rows and their amounts itself (`assumed`).
 *
 * Whether it was written: false only for an `assumed` submission whose check failed.
 */
export async function insertSubmission(q: Queryable, s: NewSubmission): Promise<boolean> {
  const { content, task, debits } = s;
  const spending = s.spending ?? { spender: null, at: null, charges: [] };
  const { charges } = spending;
  const traceContext = task.traceContext ? JSON.stringify(task.traceContext) : null;
  const categories = debits.map((d) => d.category);
  const amounts = debits.map((d) => d.amount);
  // The same checks as planning from a read: no limits to charge, and a balance row covering
  // every debit (an UPDATE that found no row would make the generation free).
  const statement = sql`
    WITH checked AS (
      SELECT ${s.assumed !== true}::boolean OR (
        NOT EXISTS (SELECT FROM spending_limits l
          WHERE l.account_id = ${content.accountId} AND l.spender = ${spending.spender ?? ''})
        AND (SELECT count(*) FROM credit_balances b
          JOIN unnest(${categories}::text[], ${amounts}::integer[]) AS d(category, amount)
            ON d.category = b.category
          WHERE b.account_id = ${content.accountId} AND b.amount >= d.amount)
          = ${categories.length}::integer
      ) AS ok
    ), plan AS (
      SELECT * FROM unnest(
        ${categories}::text[],
        ${amounts}::integer[],
        ${debits.map(() => newId('led'))}::text[]
      ) WITH ORDINALITY AS p(category, amount, ledger_id, n)
      WHERE (SELECT ok FROM checked)
    ), debited AS (
      UPDATE credit_balances SET amount = credit_balances.amount - plan.amount
      FROM plan
      WHERE credit_balances.account_id = ${content.accountId}
        AND credit_balances.category = plan.category
      RETURNING plan.*, credit_balances.amount AS balance_after
    ), ledger AS (
      INSERT INTO credit_ledger (id, account_id, category, delta, balance_after, reason, reference)
      SELECT ledger_id, ${content.accountId}, category, -amount, balance_after, 'debit', ${content.id}
      FROM debited ORDER BY n
    ), spent AS (
      INSERT INTO spending_counters (account_id, spender, category, period, period_start, spent, cap)
      SELECT ${content.accountId}, ${spending.spender}, c.* FROM unnest(
        ${charges.map((c) => c.category)}::text[],
        ${charges.map((c) => c.period)}::text[],
        ${charges.map((c) => c.periodStart.toISOString())}::timestamptz[],
        ${charges.map((c) => c.amount)}::integer[],
        ${charges.map((c) => c.cap)}::integer[]
      ) AS c
      WHERE (SELECT ok FROM checked)
      ON CONFLICT (account_id, spender, category, period, period_start) DO UPDATE
      SET spent = spending_counters.spent + excluded.spent, cap = excluded.cap
    ), content AS (
      INSERT INTO contents (id, account_id, kind, model_id, input, input_hash, idempotency_key,
        credits_charged, spender, spent_at, webhook_url)
      SELECT ${content.id}, ${content.accountId}, ${content.kind}, ${content.modelId},
        ${JSON.stringify(content.input)}, ${content.inputHash}, ${content.idempotencyKey},
        ${content.creditsCharged}, ${spending.spender}, ${spending.spender === null ? null : spending.at},
        ${content.webhookUrl ?? null}
      WHERE (SELECT ok FROM checked)
      RETURNING id, account_id
    )
    INSERT INTO tasks (id, content_id, account_id, max_attempts, model_id, trace_context, fair_key)
    SELECT ${task.id}, id, account_id, ${task.maxAttempts}::integer, ${content.modelId},
      ${traceContext}::jsonb,
      GREATEST(
        COALESCE(
          (SELECT max(r.fair_key) FROM tasks r
           WHERE r.model_id = ${content.modelId} AND r.status = 'running'),
          (SELECT min(q.fair_key) FROM tasks q
           WHERE q.model_id = ${content.modelId} AND q.status = 'queued'),
          0),
        (SELECT max(q.fair_key) + 1 FROM tasks q
         WHERE q.model_id = ${content.modelId} AND q.account_id = ${content.accountId}
           AND q.status = 'queued'))
    FROM content
    RETURNING id`;
  // The same SQL for every submission (each list is one array value): prepared once.
  return (await executeNamed(q, statement.compile(q))).length === 1;
}
