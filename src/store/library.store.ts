import type { Selectable } from 'kysely';
import type { Queryable } from './database.ts';
import type { AvatarsTable, ElementsTable } from './schema.ts';

export type ElementRow = Selectable<ElementsTable>;
export type AvatarRow = Selectable<AvatarsTable>;

/** The account's own elements and avatars. Deleted rows stay for the generations naming them. */

export async function insertElement(
  q: Queryable,
  row: Omit<ElementRow, 'created_at' | 'deleted_at'>,
): Promise<ElementRow> {
  return q.insertInto('elements').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Live elements of the account, newest first. */
export async function listElementsOf(q: Queryable, accountId: string): Promise<ElementRow[]> {
  return q
    .selectFrom('elements')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function countElementsOf(q: Queryable, accountId: string): Promise<number> {
  const row = await q
    .selectFrom('elements')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Elements among `ids`, deleted ones included when `includeDeleted` (a queued task's). */
export async function findElements(
  q: Queryable,
  ids: readonly string[],
  options: { accountId?: string; includeDeleted?: boolean } = {},
): Promise<ElementRow[]> {
  if (ids.length === 0) return [];
  let query = q.selectFrom('elements').selectAll().where('id', 'in', ids);
  if (options.accountId !== undefined) query = query.where('account_id', '=', options.accountId);
  if (!options.includeDeleted) query = query.where('deleted_at', 'is', null);
  return query.execute();
}

/** Marks an element of the account deleted; false when there is no such live element. */
export async function deleteElement(
  q: Queryable,
  accountId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  const result = await q
    .updateTable('elements')
    .set({ deleted_at: at })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertAvatar(
  q: Queryable,
  row: Omit<AvatarRow, 'created_at' | 'deleted_at'>,
): Promise<AvatarRow> {
  return q.insertInto('avatars').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A page of the account's live avatars, newest first, after the (created_at, id) cursor. */
export async function listAvatarsOf(
  q: Queryable,
  accountId: string,
  limit: number,
  after: { createdAt: Date; id: string } | null,
): Promise<AvatarRow[]> {
  let query = q
    .selectFrom('avatars')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null);
  if (after !== null) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function findAvatar(
  q: Queryable,
  accountId: string,
  id: string,
  options: { includeDeleted?: boolean } = {},
): Promise<AvatarRow | undefined> {
  let query = q
    .selectFrom('avatars')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId);
  if (!options.includeDeleted) query = query.where('deleted_at', 'is', null);
  return query.executeTakeFirst();
}

export async function deleteAvatar(
  q: Queryable,
  accountId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  const result = await q
    .updateTable('avatars')
    .set({ deleted_at: at })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
