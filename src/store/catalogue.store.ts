import { sql } from 'kysely';
import type { ModelDefinition } from '../domain/model.ts';
import type { Queryable } from './database.ts';

/**
 * The catalogue the fleet last put in use (0017): written at each node's start and by each
 * reload, so a reload from a process that serves nothing (the command line on PostgreSQL) can
 * say what it changed. Last writer wins, as for the backends' rows.
 */
export async function recordedCatalogue(
  q: Queryable,
): Promise<readonly ModelDefinition[] | undefined> {
  const row = await q.selectFrom('model_catalogue').select('models').executeTakeFirst();
  return row === undefined ? undefined : (row.models as ModelDefinition[]);
}

export async function recordCatalogue(
  q: Queryable,
  models: readonly ModelDefinition[],
  at: Date,
): Promise<void> {
  const json = JSON.stringify(models);
  await q
    .insertInto('model_catalogue')
    .values({ id: true, models: json, changed_at: at })
    // Unchanged (every restart with the same MODELS): no new row version, no write to wait for.
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet({ models: json, changed_at: at })
        .where(sql`model_catalogue.models`, 'is distinct from', sql`excluded.models`),
    )
    .execute();
}
