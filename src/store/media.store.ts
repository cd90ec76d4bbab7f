import type { Insertable, Selectable } from 'kysely';
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
  await q.insertInto('media').values(rows.map(mediaColumns)).execute();
}

/** Whether any of these media rows exists (a finish that recorded them committed). */
export async function anyMediaRecorded(q: Queryable, ids: readonly string[]): Promise<boolean> {
  if (ids.length === 0) return false;
  const row = await q.selectFrom('media').select('id').where('id', 'in', ids).executeTakeFirst();
  return row !== undefined;
}

/** A new media row in the table's column names, as inserted. */
export function mediaColumns(m: NewMediaRow) {
  return {
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
  } satisfies Insertable<MediaTable>;
}

export async function findMedia(q: Queryable, id: string): Promise<MediaRow | undefined> {
  return q.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Media of the account among `ids` in one state: usable (`ready`, the default), or uploads
 * still waiting for their bytes (`pending`). Others' IDs are absent either way.
 */
export async function findAccountMedia(
  q: Queryable,
  accountId: string,
  ids: readonly string[],
  state: 'ready' | 'pending' = 'ready',
): Promise<MediaRow[]> {
  if (ids.length === 0) return [];
  return q
    .selectFrom('media')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .where('state', '=', state)
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

/** A registered upload: a media row that is `pending` until its bytes arrive and pass. */
export async function insertPendingUpload(
  q: Queryable,
  row: Omit<NewMediaRow, 'contentId' | 'position'> & { expiresAt: Date },
): Promise<void> {
  await q
    .insertInto('media')
    .values({
      id: row.id,
      account_id: row.accountId,
      content_id: null,
      position: 0,
      kind: row.kind,
      mime_type: row.mimeType,
      bytes: row.bytes,
      width: null,
      height: null,
      duration_ms: null,
      storage_key: row.storageKey,
      filename: row.filename,
      state: 'pending',
      upload_expires_at: row.expiresAt,
    })
    .execute();
}

/**
 * Makes a pending upload usable with what the checks found. False when it is not pending
 * (already completed by a concurrent PUT): the caller removes the bytes it stored.
 */
export async function completeUpload(
  q: Queryable,
  id: string,
  found: {
    mimeType: string;
    bytes: number;
    width: number | null;
    height: number | null;
    durationMs: number | null;
    storageKey: string;
  },
): Promise<boolean> {
  const result = await q
    .updateTable('media')
    .set({
      state: 'ready',
      mime_type: found.mimeType,
      bytes: found.bytes,
      width: found.width,
      height: found.height,
      duration_ms: found.durationMs,
      storage_key: found.storageKey,
      upload_expires_at: null,
    })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Pending uploads whose URL expired before `before`, oldest first, from after `after`. */
export async function findExpiredUploads(
  q: Queryable,
  before: Date,
  limit: number,
  after?: { expiresAt: Date; id: string },
): Promise<MediaRow[]> {
  let query = q
    .selectFrom('media')
    .selectAll()
    .where('state', '=', 'pending')
    .where('upload_expires_at', '<', before);
  if (after !== undefined) {
    query = query.where(({ eb, refTuple, tuple }) =>
      eb(refTuple('upload_expires_at', 'id'), '>', tuple(after.expiresAt, after.id)),
    );
  }
  return query.orderBy('upload_expires_at').orderBy('id').limit(limit).execute();
}

/** Forgets an upload that never completed; false when it completed meanwhile. */
export async function deletePendingUpload(q: Queryable, id: string): Promise<boolean> {
  const result = await q
    .deleteFrom('media')
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Which of `ids` an element or an avatar was made from (even a deleted one: its row keeps it). */
export async function mediaInLibrary(q: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await q
    .selectFrom('elements')
    .select('media_id as id')
    .where('media_id', 'in', ids)
    .union(
      q
        .selectFrom('avatars')
        .select('portrait_media_id as id')
        .where('portrait_media_id', 'in', ids),
    )
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * The media rows of a deleted content: `removed` are forgotten (their download URLs find
 * nothing from now on), `kept` (what an element or avatar was made from) stay, belonging to
 * the account alone.
 */
export async function forgetContentMedia(
  q: Queryable,
  contentId: string,
  media: { removed: readonly string[]; kept: readonly string[] },
): Promise<void> {
  if (media.kept.length > 0) {
    await q
      .updateTable('media')
      .set({ content_id: null })
      .where('content_id', '=', contentId)
      .where('id', 'in', media.kept)
      .execute();
  }
  if (media.removed.length > 0) {
    await q
      .deleteFrom('media')
      .where('content_id', '=', contentId)
      .where('id', 'in', media.removed)
      .execute();
  }
}
