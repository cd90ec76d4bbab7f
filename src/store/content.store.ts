import type { Selectable } from 'kysely';
import type { GenerationKind } from '../domain/model.ts';
import type { Queryable } from './database.ts';
import type { ContentsTable, TaskStatus } from './schema.ts';

export type ContentRow = Selectable<ContentsTable>;

export interface NewContentRow {
  id: string;
  accountId: string;
  kind: GenerationKind;
  modelId: string;
  input: unknown;
  inputHash: string;
  idempotencyKey: string | null;
  creditsCharged: number;
  /** Called when the task ends (one-off webhook). */
  webhookUrl?: string | null;
}

/** A content of the account; another account's ID, or a deleted content, finds nothing. */
export async function findContent(
  q: Queryable,
  accountId: string,
  id: string,
): Promise<ContentRow | undefined> {
  return q
    .selectFrom('contents')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Marks a content of the account deleted, if it is not already and its task has finished (a
 * finished task never changes again, so nothing writes its media after this). False when
 * there was no such content to delete: unknown, another account's, deleted meanwhile, or
 * still running.
 */
export async function markContentDeleted(
  q: Queryable,
  accountId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  const result = await q
    .updateTable('contents')
    .set({ deleted_at: at })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('tasks')
          .select('tasks.id')
          .whereRef('tasks.content_id', '=', 'contents.id')
          .where('tasks.status', '=', 'finished'),
      ),
    )
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function findContentByIdempotencyKey(
  q: Queryable,
  accountId: string,
  key: string,
): Promise<ContentRow | undefined> {
  return q
    .selectFrom('contents')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

export interface ContentListFilter {
  kind?: GenerationKind | null | undefined;
  status?: TaskStatus | null | undefined;
  createdAfter?: Date | null | undefined;
  createdBefore?: Date | null | undefined;
  idempotencyKey?: string | null | undefined;
}

/** Position after which the next page starts (newest first: created_at, then id, descending). */
export interface ContentCursor {
  createdAt: Date;
  id: string;
}

export async function listContents(
  q: Queryable,
  accountId: string,
  filter: ContentListFilter,
  after: ContentCursor | null,
  limit: number,
): Promise<ContentRow[]> {
  let query = q
    .selectFrom('contents')
    .innerJoin('tasks', 'tasks.content_id', 'contents.id')
    .selectAll('contents')
    .where('contents.account_id', '=', accountId)
    .where('contents.deleted_at', 'is', null);
  if (filter.kind != null) query = query.where('contents.kind', '=', filter.kind);
  if (filter.status != null) query = query.where('tasks.status', '=', filter.status);
  if (filter.createdAfter != null)
    query = query.where('contents.created_at', '>', filter.createdAfter);
  if (filter.createdBefore != null)
    query = query.where('contents.created_at', '<', filter.createdBefore);
  if (filter.idempotencyKey != null)
    query = query.where('contents.idempotency_key', '=', filter.idempotencyKey);
  if (after !== null) {
    query = query.where((eb) =>
      eb.or([
        eb('contents.created_at', '<', after.createdAt),
        eb.and([eb('contents.created_at', '=', after.createdAt), eb('contents.id', '<', after.id)]),
      ]),
    );
  }
  return query
    .orderBy('contents.created_at', 'desc')
    .orderBy('contents.id', 'desc')
    .limit(limit)
    .execute();
}
