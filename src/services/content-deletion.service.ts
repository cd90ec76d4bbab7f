import type { Actor } from '../domain/actor.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import { findContent, markContentDeleted } from '../store/content.store.ts';
import type { Db } from '../store/database.ts';
import { forgetContentMedia, listMediaOfContents, mediaInLibrary } from '../store/media.store.ts';
import { findTasksOfContents } from '../store/task-queue.store.ts';

export interface ContentDeletionDeps {
  db: Db;
  storage: Pick<MediaStorage, 'remove'>;
  clock: Clock;
}

/**
 * Deleting a generation of the account (`deleteContent`): its media files and rows go, so its
 * download URLs find nothing, and it leaves the account's history. What it was charged stays
 * charged (the ledger, the usage report and its task are history; deleting is not a refund).
 * Not in the audit log, which records credentials, money and operators' acts; nor are the
 * submissions, uploads, elements and avatars it would sit beside.
 */
export class ContentDeletionService {
  readonly #deps: ContentDeletionDeps;

  constructor(deps: ContentDeletionDeps) {
    this.#deps = deps;
  }

  /**
   * Deletes a finished generation of the account. Another account's, an unknown or an
   * already deleted one is 140004; one whose task is queued or running is 120001 on
   * `contentId` (cancel it first), and nothing changes. An image that an element or avatar
   * was made from stays, with that element or avatar.
   */
  async deleteContent(actor: Actor, contentId: string): Promise<true> {
    const { db, storage, clock } = this.#deps;
    const content = await findContent(db, actor.accountId, contentId);
    if (content === undefined) throw notFound(contentId);
    const [task] = await findTasksOfContents(db, [content.id]);
    if (task !== undefined && task.status !== 'finished') {
      throw new AppError(
        ErrorCode.InvalidInput,
        `contentId: generation "${contentId}" is still ${task.status}; cancel its task "${task.id}" (cancelTask) first, then delete it.`,
        { field: 'contentId', taskId: task.id, status: task.status },
      );
    }
    const media = await listMediaOfContents(db, [content.id]);
    const inLibrary = await mediaInLibrary(
      db,
      media.map((m) => m.id),
    );
    const removed = media.filter((m) => !inLibrary.has(m.id));
    // The files first: should removing one fail, the generation is still listed and whole
    // in the database, and deleting it again finishes the job (removing is idempotent).
    await Promise.all(removed.map((m) => storage.remove(m.storage_key)));
    const deleted = await db.transaction().execute(async (trx) => {
      if (!(await markContentDeleted(trx, actor.accountId, content.id, clock.now()))) return false;
      await forgetContentMedia(trx, content.id, {
        removed: removed.map((m) => m.id),
        kept: [...inLibrary],
      });
      return true;
    });
    // A concurrent delete got there first.
    if (!deleted) throw notFound(contentId);
    return true;
  }
}

function notFound(contentId: string): AppError {
  return new AppError(ErrorCode.NotFound, `No content "${contentId}" in this account.`, {
    field: 'contentId',
  });
}
