import type { ModelStatus } from '../domain/model.ts';
import type { Queryable } from './database.ts';

/** Statuses admins set at runtime, by model. */
export async function listModelStatuses(q: Queryable): Promise<Map<string, ModelStatus>> {
  const rows = await q.selectFrom('model_status').select(['model_id', 'status']).execute();
  return new Map(rows.map((r) => [r.model_id, r.status]));
}

/**
 * Sets a model's status over the configuration's, or (`null`) gives it back to the
 * configuration. Returns the status it had set before, if any.
 */
export async function setModelStatus(
  q: Queryable,
  modelId: string,
  status: ModelStatus | null,
  at: Date,
): Promise<ModelStatus | null> {
  const before = await q
    .selectFrom('model_status')
    .select('status')
    .where('model_id', '=', modelId)
    .forUpdate()
    .executeTakeFirst();
  if (status === null) {
    await q.deleteFrom('model_status').where('model_id', '=', modelId).execute();
  } else {
    await q
      .insertInto('model_status')
      .values({ model_id: modelId, status, changed_at: at })
      .onConflict((oc) => oc.column('model_id').doUpdateSet({ status, changed_at: at }))
      .execute();
  }
  return before?.status ?? null;
}
