import type { Selectable } from 'kysely';
import type { Queryable } from './database.ts';
import type { MediaKind, MediaTable } from './schema.ts';

export type MediaRow = Selectable<MediaTable>;

export interface NewMediaRow {
  id: string;
  accountId: string;
  contentId: string | null;
  position: number;
  kind: MediaKind;
  mimeType: string;
  bytes: number;
  width: number | null;
  height: number | null;
  durationMs: number | null;
  storageKey: string;
  filename: string;
}

export async function insertMedia(q: Queryable, rows: readonly NewMediaRow[]): Promise<void> {
  if (rows.length === 0) return;
  await q
    .insertInto('media')
    .values(
      rows.map((m) => ({
        id: m.id,
        account_id: m.accountId,
        content_id: m.contentId,
        position: m.position,
        kind: m.kind,
        mime_type: m.mimeType,
        bytes: m.bytes,
        width: m.width,
        height: m.height,
        duration_ms: m.durationMs,
        storage_key: m.storageKey,
        filename: m.filename,
      })),
    )
    .execute();
}

export async function findMedia(q: Queryable, id: string): Promise<MediaRow | undefined> {
  return q.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Media of the account among `ids`; others' IDs are simply absent. */
export async function findAccountMedia(
  q: Queryable,
  accountId: string,
  ids: readonly string[],
): Promise<MediaRow[]> {
  if (ids.length === 0) return [];
  return q
    .selectFrom('media')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
}

export async function listMediaOfContents(
  q: Queryable,
  contentIds: readonly string[],
): Promise<MediaRow[]> {
  if (contentIds.length === 0) return [];
  return q
    .selectFrom('media')
    .selectAll()
    .where('content_id', 'in', contentIds)
    .orderBy('content_id')
    .orderBy('position')
    .execute();
}
