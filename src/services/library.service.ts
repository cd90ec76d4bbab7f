import type { Actor } from '../domain/actor.ts';
import type { ElementDefinition, ElementKind, ElementPicture } from '../domain/element.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, type FieldProblem, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import {
  type Cursors,
  type Page,
  pageOf,
  pageSize,
  timeIdPageInfo,
  timeIdPosition,
} from '../shared/pagination.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import type { Db } from '../store/database.ts';
import {
  type AvatarRow,
  countElementsOf,
  deleteAvatar,
  deleteElement,
  type ElementRow,
  findAvatar,
  findElements,
  insertAvatar,
  insertElement,
  listAvatarsOf,
  listElementsOf,
} from '../store/library.store.ts';
import { findMedia, type MediaRow } from '../store/media.store.ts';
import type { ReadyMedia } from './upload.service.ts';
import type { VoiceService } from './voice.service.ts';

export interface AvatarView {
  readonly avatarId: string;
  readonly name: string;
  readonly portraitMediaId: string;
  readonly voiceModelId: string | null;
  readonly createdAt: Date;
}

export interface LibraryServiceDeps {
  db: Db;
  storage: MediaStorage;
  clock: Clock;
  voices: VoiceService;
  /** Usable media of an account (completing uploads on their first use). */
  readyMedia: ReadyMedia;
  /** The shared library (built-in elements), visible to everyone. */
  publicElements: readonly ElementDefinition[];
  /** Own elements an account may keep (they are listed in memory with the library). */
  maxElementsPerAccount: number;
  cursors: Cursors;
}

const elementKinds: readonly ElementKind[] = ['character', 'object', 'style', 'scene'];
const maxNameLength = 100;
const maxDescriptionLength = 1000;

/**
 * What an account brings to its generations: elements (the public library plus its own,
 * made from its images) and avatars (a portrait and a default voice). Every read and write is
 * scoped to the caller's account; another account's element, avatar or media is "not found".
 */
export class LibraryService {
  readonly #deps: LibraryServiceDeps;
  readonly #public: ReadonlyMap<string, ElementDefinition>;

  constructor(deps: LibraryServiceDeps) {
    this.#deps = deps;
    this.#public = new Map(deps.publicElements.map((e) => [e.elementId, e]));
  }

  /** The public library, then (with a credential) the account's own, newest first. */
  async listElements(
    actor: Actor | null,
    filter: { kind?: ElementKind | null | undefined },
    first?: number | null,
    after?: string | null,
  ): Promise<Page<ElementDefinition>> {
    const own = actor === null ? [] : await listElementsOf(this.#deps.db, actor.accountId);
    const all = [...this.#public.values(), ...own.map(toElement)].filter(
      (e) => filter.kind == null || e.kind === filter.kind,
    );
    return pageOf(all, first, after, this.#deps.cursors.for(actor?.accountId ?? null, 'elements'));
  }

  async getElement(actor: Actor | null, elementId: string): Promise<ElementDefinition> {
    const [element] = await this.#visible(actor, [elementId]);
    if (element === undefined) {
      throw new AppError(ErrorCode.NotFound, `No element "${elementId}".`, { field: 'elementId' });
    }
    return element;
  }

  /** The elements a submission names, all visible to the actor, or 140004 naming the missing. */
  async elementsFor(actor: Actor, elementIds: readonly string[]): Promise<ElementDefinition[]> {
    const found = await this.#visible(actor, elementIds);
    const missing = elementIds.filter((id) => !found.some((e) => e.elementId === id));
    if (missing.length > 0) {
      throw new AppError(
        ErrorCode.NotFound,
        `No element ${missing.map((id) => `"${id}"`).join(', ')}.`,
        { field: 'elementIds', missing },
      );
    }
    return elementIds.map((id) => found.find((e) => e.elementId === id)!);
  }

  async createElement(
    actor: Actor,
    input: { kind: ElementKind; name: string; description?: string | null; mediaId: string },
  ): Promise<ElementDefinition> {
    const problems = nameProblems(input.name);
    if (!elementKinds.includes(input.kind)) {
      problems.push({ field: 'kind', message: `must be one of ${elementKinds.join(', ')}` });
    }
    const description = input.description?.trim() || null;
    if (description !== null && description.length > maxDescriptionLength) {
      problems.push({
        field: 'description',
        message: `must be at most ${maxDescriptionLength} characters`,
      });
    }
    if (problems.length > 0) throw invalidInput(problems);
    await this.#imageOf(actor, input.mediaId, 'mediaId');
    const { db, maxElementsPerAccount } = this.#deps;
    if ((await countElementsOf(db, actor.accountId)) >= maxElementsPerAccount) {
      throw new AppError(
        ErrorCode.UnsupportedCombination,
        `An account keeps at most ${maxElementsPerAccount} elements; delete some first.`,
        { field: 'mediaId', maxElements: maxElementsPerAccount },
      );
    }
    const row = await insertElement(db, {
      id: newId('elm'),
      account_id: actor.accountId,
      kind: input.kind,
      name: input.name.trim(),
      description,
      media_id: input.mediaId,
    });
    return toElement(row);
  }

  /** Deletes an own element. Generations already submitted with it still run. */
  async deleteElement(actor: Actor, elementId: string): Promise<boolean> {
    if (this.#public.has(elementId)) {
      throw new AppError(ErrorCode.Forbidden, 'Elements of the public library cannot be deleted.', {
        field: 'elementId',
      });
    }
    const deleted = await deleteElement(
      this.#deps.db,
      actor.accountId,
      elementId,
      this.#deps.clock.now(),
    );
    if (!deleted) {
      throw new AppError(ErrorCode.NotFound, `No element "${elementId}" in this account.`, {
        field: 'elementId',
      });
    }
    return true;
  }

  /**
   * The pictures of elements a queued task names, in order: SVG of library elements, the
   * stored image of own ones (deleted since the submission included). Undefined when a
   * picture is gone: an expected outcome of the task's run, not a fault to retry.
   */
  async elementPictures(elementIds: readonly string[]): Promise<ElementPicture[] | undefined> {
    const own = new Map(
      (await findElements(this.#deps.db, elementIds, { includeDeleted: true })).map((e) => [
        e.id,
        e,
      ]),
    );
    const pictures: ElementPicture[] = [];
    for (const id of elementIds) {
      const library = this.#public.get(id);
      if (library?.svg != null)
        pictures.push({ kind: library.kind, picture: Buffer.from(library.svg) });
      const row = own.get(id);
      if (row !== undefined) {
        const picture = await this.mediaBytes(row.media_id);
        if (picture === undefined) return undefined;
        pictures.push({ kind: row.kind, picture });
      }
    }
    return pictures;
  }

  /**
   * The stored bytes of media a task names (checked at submission); undefined when they are
   * gone since: the row, its ready state or the stored object. A store that cannot answer
   * still throws, so the task is tried again.
   */
  async mediaBytes(mediaId: string): Promise<Buffer | undefined> {
    const media = await findMedia(this.#deps.db, mediaId);
    if (media === undefined || media.state !== 'ready') return undefined;
    const read = await this.#deps.storage.getAtMost(media.storage_key, Number.POSITIVE_INFINITY);
    return read?.bytes ?? undefined;
  }

  /** The portrait of an avatar a queued task names (deleted since submission included). */
  async avatarPortrait(accountId: string, avatarId: string): Promise<Buffer | undefined> {
    const avatar = await findAvatar(this.#deps.db, accountId, avatarId, { includeDeleted: true });
    if (avatar === undefined) return undefined;
    return this.mediaBytes(avatar.portrait_media_id);
  }

  async createAvatar(
    actor: Actor,
    input: { name: string; portraitMediaId: string; voiceModelId?: string | null },
  ): Promise<AvatarView> {
    const problems = nameProblems(input.name);
    if (problems.length > 0) throw invalidInput(problems);
    await this.#imageOf(actor, input.portraitMediaId, 'portraitMediaId');
    const voiceModelId = input.voiceModelId ?? null;
    if (voiceModelId !== null) await this.#deps.voices.getFor(actor, voiceModelId);
    const row = await insertAvatar(this.#deps.db, {
      id: newId('ava'),
      account_id: actor.accountId,
      name: input.name.trim(),
      portrait_media_id: input.portraitMediaId,
      voice_model_id: voiceModelId,
    });
    return toAvatar(row);
  }

  async listAvatars(
    actor: Actor,
    first?: number | null,
    after?: string | null,
  ): Promise<Page<AvatarView>> {
    const size = pageSize(first, 50);
    const cursors = this.#deps.cursors.for(actor.accountId, 'avatars');
    const rows = await listAvatarsOf(
      this.#deps.db,
      actor.accountId,
      size + 1,
      timeIdPosition(cursors, after),
    );
    return {
      nodes: rows.slice(0, size).map(toAvatar),
      // From the rows read, one more than the page: whether another page follows.
      pageInfo: timeIdPageInfo(rows, size, cursors, (r) => ({ createdAt: r.created_at, id: r.id })),
    };
  }

  /** A live avatar of the account, or 140004. */
  async getAvatar(actor: Actor, avatarId: string): Promise<AvatarView> {
    const row = await findAvatar(this.#deps.db, actor.accountId, avatarId);
    if (row === undefined) {
      throw new AppError(ErrorCode.NotFound, `No avatar "${avatarId}" in this account.`, {
        field: 'avatarId',
      });
    }
    return toAvatar(row);
  }

  async deleteAvatar(actor: Actor, avatarId: string): Promise<boolean> {
    if (!(await deleteAvatar(this.#deps.db, actor.accountId, avatarId, this.#deps.clock.now()))) {
      throw new AppError(ErrorCode.NotFound, `No avatar "${avatarId}" in this account.`, {
        field: 'avatarId',
      });
    }
    return true;
  }

  /**
   * Usable media of the account of the given kind: 140004 when it is unknown, another
   * account's or an unfinished upload; 120001 when it is of another kind.
   */
  async mediaOf(
    actor: Actor,
    mediaId: string,
    kind: MediaRow['kind'],
    field: string,
  ): Promise<MediaRow> {
    const [media] = await this.#deps.readyMedia(actor.accountId, [mediaId], field);
    if (media === undefined) {
      throw new AppError(ErrorCode.NotFound, `No media "${mediaId}" in this account.`, { field });
    }
    if (media.kind !== kind) {
      throw invalidInput([{ field, message: `"${mediaId}" is ${media.kind}, not ${kind}` }]);
    }
    return media;
  }

  async #imageOf(actor: Actor, mediaId: string, field: string): Promise<MediaRow> {
    return this.mediaOf(actor, mediaId, 'image', field);
  }

  async #visible(actor: Actor | null, ids: readonly string[]): Promise<ElementDefinition[]> {
    const library = ids.flatMap((id) => this.#public.get(id) ?? []);
    const ownIds = ids.filter((id) => !this.#public.has(id));
    const own =
      actor === null || ownIds.length === 0
        ? []
        : await findElements(this.#deps.db, ownIds, { accountId: actor.accountId });
    return [...library, ...own.map(toElement)];
  }
}

function nameProblems(name: string): FieldProblem[] {
  const trimmed = name.trim();
  return trimmed.length === 0 || trimmed.length > maxNameLength
    ? [{ field: 'name', message: `must be 1 to ${maxNameLength} characters` }]
    : [];
}

function toElement(row: ElementRow): ElementDefinition {
  return {
    elementId: row.id,
    kind: row.kind,
    name: row.name,
    description: row.description,
    accountId: row.account_id,
    svg: null,
    previewMediaId: row.media_id,
    createdAt: row.created_at,
  };
}

function toAvatar(row: AvatarRow): AvatarView {
  return {
    avatarId: row.id,
    name: row.name,
    portraitMediaId: row.portrait_media_id,
    voiceModelId: row.voice_model_id,
    createdAt: row.created_at,
  };
}
