import { type RawBuilder, sql } from 'kysely';
import {
  finishCodes,
  type UsageDimension,
  type UsageQuery,
  type UsageRow,
} from '../domain/usage.ts';
import type { Db } from './database.ts';

/**
 * Each dimension's column, over `c` (contents) joined with `t` (tasks). A submission's backend
 * is its task's last; a provider call's is its own run's (`a.backend_id`, see `usageReport`).
 */
const dimensionColumns: Readonly<Record<UsageDimension, RawBuilder<unknown>>> = {
  // date_bin from a UTC midnight: UTC days whatever the session's time zone.
  day: sql`date_bin('1 day', c.created_at, timestamptz '2000-01-01 00:00:00+00')`,
  account: sql`c.account_id`,
  model: sql`c.model_id`,
  kind: sql`c.kind`,
  backend: sql`t.backend_id`,
  credential: sql`c.spender`,
};

interface ReportRow {
  day: Date | null;
  account: string | null;
  model: string | null;
  kind: string | null;
  backend: string | null;
  credential: string | null;
  submissions: number;
  finishes: number[];
  credits_charged: number;
  credits_refunded: number;
  run_seconds: number;
  provider_calls: number;
  provider_failures: number;
}

/**
 * The usage of `query`'s range, grouped, at most `limit` rows (ordered by the dimensions).
 *
 * One statement in two parts, added up by dimension values: the submissions (contents joined
 * with their tasks, both read by `created_at` through the covering indexes of migration 0018)
 * and the provider calls (those tasks' `task_attempts`, only for tasks run on a pool: a task
 * that never held a backend records none). A content and its task share `created_at` (one
 * statement inserts both), so the same range selects both sides of the join. It runs in a
 * transaction of its own with JIT off (compiling the plan cost more than 1 s, the query about
 * 0.1 s) and enough `work_mem` for its sorts to stay in memory.
 */
export async function usageReport(db: Db, query: UsageQuery, limit: number): Promise<UsageRow[]> {
  const dims = usageDimensionsInOrder(query.groupBy);
  const keys = dims.map((d) => sql`${dimensionColumns[d]} AS ${sql.ref(d)}`);
  // A run on a pool counts on its own backend: failures before a failover stay on the backend
  // that failed, not on the one that finished the task.
  const callKeys = dims.map(
    (d) => sql`${d === 'backend' ? sql`a.backend_id` : dimensionColumns[d]} AS ${sql.ref(d)}`,
  );
  const outer = dims.map((d) => sql.ref(d));
  const empty = (['day', 'account', 'model', 'kind', 'backend', 'credential'] as const)
    .filter((d) => !dims.includes(d))
    .map((d) => sql`NULL AS ${sql.ref(d)}`);
  const where = scope(query, sql`t.backend_id`);
  const callsWhere = scope(query, sql`a.backend_id`);
  const finishes = finishCodes.map(
    (code) => sql`count(*) FILTER (WHERE t.finish_code = ${sql.lit(code)})::int`,
  );
  const zeroes = finishCodes.map(() => sql`0`);
  const sumFinishes = finishCodes.map((_, i) => sql`sum(${sql.ref(`f${i}`)})::int`);
  const statement = sql<ReportRow>`
    SELECT ${sql.join([...outer, ...empty])},
      sum(submissions)::int AS submissions,
      ARRAY[${sql.join(sumFinishes)}] AS finishes,
      sum(credits_charged)::float8 AS credits_charged,
      sum(credits_refunded)::float8 AS credits_refunded,
      coalesce(sum(run_seconds), 0)::float8 AS run_seconds,
      sum(provider_calls)::int AS provider_calls,
      sum(provider_failures)::int AS provider_failures
    FROM (
      SELECT ${sql.join(keys)}, count(*) AS submissions,
        ${sql.join(finishes.map((f, i) => sql`${f} AS ${sql.ref(`f${i}`)}`))},
        sum(c.credits_charged) AS credits_charged,
        sum(c.credits_refunded) AS credits_refunded,
        sum(extract(epoch FROM t.finished_at - t.started_at))
          FILTER (WHERE t.status = 'finished') AS run_seconds,
        0 AS provider_calls, 0 AS provider_failures
      FROM contents c
      JOIN tasks t ON t.content_id = c.id
      WHERE ${where}
      GROUP BY ${sql.join(dims.map((_, i) => sql.lit(i + 1)))}
      UNION ALL
      SELECT ${sql.join(callKeys)}, 0,
        ${sql.join(zeroes.map((z, i) => sql`${z} AS ${sql.ref(`f${i}`)}`))},
        0, 0, 0,
        count(*), count(*) FILTER (WHERE a.outcome <> 'ok')
      FROM contents c
      JOIN tasks t ON t.content_id = c.id
      JOIN task_attempts a ON a.task_id = t.id
      WHERE ${callsWhere} AND t.backend_id IS NOT NULL
      GROUP BY ${sql.join(dims.map((_, i) => sql.lit(i + 1)))}
    ) parts
    GROUP BY ${sql.join(outer)}
    ORDER BY ${sql.join(outer)}
    LIMIT ${limit}`;
  const rows = await db.transaction().execute(async (trx) => {
    await sql`SET LOCAL jit = off`.execute(trx);
    await sql`SET LOCAL work_mem = '32MB'`.execute(trx);
    return (await statement.execute(trx)).rows;
  });
  return rows.map(rowOf);
}

/** The dimensions in their canonical order: columns and sorting do not depend on the asking. */
function usageDimensionsInOrder(groupBy: readonly UsageDimension[]): UsageDimension[] {
  return (['day', 'account', 'model', 'kind', 'backend', 'credential'] as const).filter((d) =>
    groupBy.includes(d),
  );
}

function scope(query: UsageQuery, backendColumn: RawBuilder<unknown>) {
  const { from, to, filter } = query;
  const conditions = [
    sql`c.created_at >= ${from}`,
    sql`c.created_at < ${to}`,
    // The same range on the task: its own index finds it (it was created with its content).
    sql`t.created_at >= ${from}`,
    sql`t.created_at < ${to}`,
  ];
  if (filter.accountId !== undefined) conditions.push(sql`c.account_id = ${filter.accountId}`);
  if (filter.modelId !== undefined) conditions.push(sql`c.model_id = ${filter.modelId}`);
  if (filter.kind !== undefined) conditions.push(sql`c.kind = ${filter.kind}`);
  if (filter.backend !== undefined) conditions.push(sql`${backendColumn} = ${filter.backend}`);
  if (filter.credential !== undefined) conditions.push(sql`c.spender = ${filter.credential}`);
  return sql.join(conditions, sql` AND `);
}

function rowOf(row: ReportRow): UsageRow {
  return {
    day: row.day === null ? null : new Date(row.day),
    accountId: row.account,
    modelId: row.model,
    kind: row.kind as UsageRow['kind'],
    backend: row.backend,
    credential: row.credential,
    submissions: Number(row.submissions),
    finishes: finishCodes
      .map((code, i) => ({ code, count: Number(row.finishes[i] ?? 0) }))
      .filter((f) => f.count > 0),
    creditsCharged: Number(row.credits_charged),
    creditsRefunded: Number(row.credits_refunded),
    runSeconds: Math.round(Number(row.run_seconds) * 1000) / 1000,
    providerCalls: Number(row.provider_calls),
    providerFailures: Number(row.provider_failures),
  };
}
