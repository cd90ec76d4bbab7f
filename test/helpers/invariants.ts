import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { FinishCode } from '../../src/domain/finish-code.ts';
import type { Db } from '../../src/store/database.ts';

/**
 * The five invariants every fault and scale-out test ends on, checked with SQL against what
 * the database holds once the dust has settled:
 *
 * 1. no lost task: every submission has its task, and every task has finished;
 * 2. one debit per submission: one ledger debit per category, summing to `credits_charged`;
 * 3. at most one refund: one ledger refund per category at most, only for a failed task,
 *    summing to `credits_refunded`, never more than was charged;
 * 4. exactly one final outcome: one task per content with a finish code and a finish time;
 * 5. no duplicated output media: one row per (content, position), and media only for success.
 *
 * Plus the ledger's own rule: each balance equals the sum of its ledger rows.
 * Returns the violations found, each a readable sentence (an empty list when all held).
 */
export async function invariantViolations(db: Db): Promise<string[]> {
  const found: string[] = [];
  const report = async (
    rule: string,
    query: ReturnType<typeof sql<{ id: string; detail: string }>>,
  ) => {
    const { rows } = await query.execute(db);
    for (const row of rows) found.push(`${rule}: ${row.id} (${row.detail})`);
  };

  await report(
    'lost task',
    sql`SELECT c.id, 'no task' AS detail FROM contents c
        WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.content_id = c.id)
        UNION ALL
        SELECT t.id, 'status ' || t.status AS detail FROM tasks t WHERE t.status <> 'finished'`,
  );
  await report(
    'debit',
    sql`SELECT c.id, 'charged ' || c.credits_charged || ', debited ' || COALESCE(d.total, 0)
          || ' in ' || COALESCE(d.rows, 0) || ' rows over ' || COALESCE(d.categories, 0)
          || ' categories' AS detail
        FROM contents c
        LEFT JOIN (
          SELECT reference, -sum(delta) AS total, count(*) AS rows,
            count(DISTINCT category) AS categories
          FROM credit_ledger WHERE reason = 'debit' GROUP BY reference
        ) d ON d.reference = c.id
        WHERE COALESCE(d.total, 0) <> c.credits_charged OR COALESCE(d.rows, 0) <> COALESCE(d.categories, 0)
        UNION ALL
        SELECT l.id, 'debit for no content ' || COALESCE(l.reference, 'null') AS detail
        FROM credit_ledger l
        WHERE l.reason = 'debit' AND NOT EXISTS (SELECT 1 FROM contents c WHERE c.id = l.reference)`,
  );
  await report(
    'refund',
    sql`SELECT c.id, 'charged ' || c.credits_charged || ', refunded ' || c.credits_refunded
          || ', ledger ' || COALESCE(r.total, 0) || ' in ' || COALESCE(r.rows, 0) || ' rows, finish '
          || COALESCE(t.finish_code::text, 'none') AS detail
        FROM contents c
        JOIN tasks t ON t.content_id = c.id
        LEFT JOIN (
          SELECT reference, sum(delta) AS total, count(*) AS rows,
            count(DISTINCT category) AS categories
          FROM credit_ledger WHERE reason = 'refund' GROUP BY reference
        ) r ON r.reference = c.id
        WHERE COALESCE(r.total, 0) <> c.credits_refunded
           OR COALESCE(r.rows, 0) <> COALESCE(r.categories, 0)
           OR c.credits_refunded > c.credits_charged
           OR (c.credits_refunded > 0 AND t.finish_code = ${FinishCode.Ok})`,
  );
  await report(
    'final outcome',
    sql`SELECT c.id, count(t.id) || ' tasks' AS detail
        FROM contents c JOIN tasks t ON t.content_id = c.id
        GROUP BY c.id HAVING count(t.id) <> 1
        UNION ALL
        SELECT t.id, 'finished without a code or a time' AS detail FROM tasks t
        WHERE t.status = 'finished' AND (t.finish_code IS NULL OR t.finished_at IS NULL)`,
  );
  await report(
    'media',
    sql`SELECT m.content_id AS id, count(*) || ' media at position ' || m.position AS detail
        FROM media m WHERE m.content_id IS NOT NULL
        GROUP BY m.content_id, m.position HAVING count(*) > 1
        UNION ALL
        SELECT t.content_id AS id, 'finish ' || t.finish_code || ' with ' || count(m.id) || ' media' AS detail
        FROM tasks t LEFT JOIN media m ON m.content_id = t.content_id
        WHERE t.status = 'finished'
        GROUP BY t.content_id, t.finish_code
        HAVING (t.finish_code = ${FinishCode.Ok}) <> (count(m.id) > 0)`,
  );
  await report(
    'balance',
    sql`SELECT b.account_id || '/' || b.category AS id,
          'balance ' || b.amount || ', ledger ' || COALESCE(sum(l.delta), 0) AS detail
        FROM credit_balances b
        LEFT JOIN credit_ledger l ON l.account_id = b.account_id AND l.category = b.category
        GROUP BY b.account_id, b.category, b.amount
        HAVING b.amount <> COALESCE(sum(l.delta), 0)`,
  );
  return found;
}

/** Waits until every task of the database has finished (the queue has drained). */
export async function drained(db: Db, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '<>', 'finished')
      .executeTakeFirstOrThrow();
    if (Number(row.n) === 0) return;
    if (Date.now() > deadline) assert.fail(`${row.n} tasks still unfinished`);
    await sleep(100);
  }
}
