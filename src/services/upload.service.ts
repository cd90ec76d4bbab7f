import { randomBytes } from 'node:crypto';
import type { Actor } from '../domain/actor.ts';
import type { MediaKind } from '../domain/media.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { type Logger, silentLogger } from '../shared/logger.ts';
import type { BoundedRead, MediaStorage } from '../storage/media-storage.ts';
import type { UrlSigner } from '../storage/url-signer.ts';
import type { Db } from '../store/database.ts';
import {
  completeUpload,
  deletePendingUpload,
  findAccountMedia,
  findExpiredUploads,
  findMedia,
  insertPendingUpload,
  type MediaRow,
} from '../store/media.store.ts';
import {
  acceptedTypes,
  type ContentLimits,
  inspectUpload,
  type MediaProbe,
  normalType,
  safeFilename,
  type UploadKind,
} from './upload-checks.ts';

export interface UploadLimits extends ContentLimits {
  readonly maxBytes: number;
  /** How long the upload URL is valid. */
  readonly urlTtlMs: number;
}

export interface UploadServiceDeps {
  db: Db;
  signer: UrlSigner;
  storage: MediaStorage;
  probe: MediaProbe;
  clock: Clock;
  limits: UploadLimits;
  /** Clients PUT straight to the media store when it takes presigned PUTs (S3). */
  direct: boolean;
}

export interface Upload {
  readonly mediaId: string;
  readonly uploadUrl: string;
  readonly expiresAt: Date;
}

/** What the checks found in uploaded bytes; it replaces what the client declared. */
export interface UploadedMedia {
  readonly mediaId: string;
  readonly kind: MediaKind;
  readonly mimeType: string;
  readonly bytes: number;
  readonly width: number | null;
  readonly height: number | null;
  readonly durationMs: number | null;
}

/** The account's usable media among `ids` ({@link UploadService.readyMedia}). */
export type ReadyMedia = (
  accountId: string,
  ids: readonly string[],
  field: string,
) => Promise<MediaRow[]>;

/** What became of bytes a client put in the store itself. */
type Settled = 'ready' | 'absent' | { readonly refused: string };

/** Where a client's own PUT lands, apart from every verified file. */
const stagingPrefix = 'staging/';
/** An expired upload is left this long for a PUT that started in time to finish. */
const sweepGraceMs = 10 * 60_000; // 10 minutes
const sweepBatch = 100;

/**
 * Uploads in two steps: `createUpload` registers a pending media row and returns a URL to PUT
 * the bytes to; the bytes are then checked by content (never by what the client declared) —
 * real type, size, dimensions, duration — stored under a key of their own, and only then is
 * the media usable. Anything refused leaves the media pending: unusable, and retriable until
 * the URL expires.
 *
 * The URL is Atelier's own `PUT /uploads/:id` (checked on arrival, answered with what was
 * found), or with object storage a presigned PUT straight to a staging key in the bucket. The
 * bucket cannot check anything, so staged bytes are checked at their first use (an element,
 * an avatar, a generation input, a download URL) or, if never used, once the URL has expired;
 * verified bytes are copied out of staging, so the still-valid URL cannot change them.
 */
export class UploadService {
  readonly #deps: UploadServiceDeps;
  /** Staged uploads being checked in this process, so concurrent first uses check once. */
  readonly #settling = new Map<string, Promise<Settled>>();

  constructor(deps: UploadServiceDeps) {
    this.#deps = deps;
  }

  get limits(): UploadLimits {
    return this.#deps.limits;
  }

  async create(
    actor: Actor,
    input: { kind: MediaKind; mimeType: string; bytes: number; filename?: string | null },
  ): Promise<Upload> {
    const { limits, storage } = this.#deps;
    if (input.kind === 'video') {
      throw new AppError(
        ErrorCode.UnsupportedCombination,
        'kind: video uploads are not taken; upload an image (to animate, for elements and portraits) or audio (for avatars).',
        { field: 'kind', allowed: Object.keys(acceptedTypes) },
      );
    }
    const mimeType = normalType(input.mimeType);
    const problems = [];
    if (!acceptedTypes[input.kind].includes(mimeType)) {
      problems.push({
        field: 'mimeType',
        message: `must be one of ${acceptedTypes[input.kind].join(', ')} for ${input.kind}`,
      });
    }
    if (!Number.isInteger(input.bytes) || input.bytes < 1 || input.bytes > limits.maxBytes) {
      problems.push({ field: 'bytes', message: `must be from 1 to ${limits.maxBytes}` });
    }
    const filename = input.filename == null ? null : safeFilename(input.filename);
    if (input.filename != null && filename === null) {
      problems.push({ field: 'filename', message: 'must be 1 to 200 characters' });
    }
    if (problems.length > 0) throw invalidInput(problems);

    const mediaId = newId('med');
    // Whole seconds, so Atelier's URL and a presigned one expire at the same instant.
    const expiresAt = new Date(
      Math.floor((this.#deps.clock.now().getTime() + limits.urlTtlMs) / 1000) * 1000,
    );
    const stagingKey = `${stagingPrefix}${actor.accountId}/${mediaId}`;
    const presigned = this.#deps.direct
      ? await storage.presignedPut(stagingKey, { expiresAt, bytes: input.bytes })
      : null;
    await insertPendingUpload(this.#deps.db, {
      id: mediaId,
      accountId: actor.accountId,
      kind: input.kind,
      mimeType,
      bytes: input.bytes,
      width: null,
      height: null,
      durationMs: null,
      storageKey: presigned === null ? `uploads/${actor.accountId}/${mediaId}` : stagingKey,
      filename: filename ?? mediaId,
      expiresAt,
    });
    const uploadUrl = presigned ?? this.#deps.signer.signUpload(mediaId, expiresAt).url;
    return { mediaId, uploadUrl, expiresAt };
  }

  /** True when (mediaId, exp, sig) is a valid, unexpired upload URL. */
  verifyUrl(mediaId: string, exp: string | undefined, sig: string | undefined): boolean {
    return this.#deps.signer.verifyUpload(mediaId, exp, sig);
  }

  /** Checks and stores the bytes of a pending upload (the URL was verified by the caller). */
  async receive(mediaId: string, body: Buffer, signal?: AbortSignal): Promise<UploadedMedia> {
    const media = await findMedia(this.#deps.db, mediaId);
    if (media === undefined) {
      throw new AppError(ErrorCode.NotFound, `No upload "${mediaId}".`, { field: 'mediaId' });
    }
    if (media.state !== 'pending') throw alreadyComplete();
    const outcome = await this.#accept(media, body, signal);
    if (outcome === null) throw alreadyComplete();
    if ('refused' in outcome) throw invalidInput([{ field: 'body', message: outcome.refused }]);
    return outcome;
  }

  /**
   * The account's usable media among `ids`, completing staged uploads on their first use.
   * Unknown IDs, others' media and uploads whose bytes have not arrived are simply absent;
   * staged bytes that fail the checks are 120001 on `field`, saying why.
   */
  async readyMedia(accountId: string, ids: readonly string[], field: string): Promise<MediaRow[]> {
    const { db } = this.#deps;
    const ready = await findAccountMedia(db, accountId, ids);
    const found = new Set(ready.map((m) => m.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length === 0) return ready;
    const staged = (await findAccountMedia(db, accountId, missing, 'pending')).filter(isStaged);
    // None pending: unknown, or completed by another node since the first read (the race of
    // two nodes using one staged upload at once), which a second read tells apart.
    if (staged.length === 0) return findAccountMedia(db, accountId, ids);
    for (const upload of staged) {
      const settled = await this.#settle(upload);
      if (typeof settled === 'object') {
        throw invalidInput([
          {
            field,
            message: `the upload "${upload.id}" was refused: ${settled.refused}; PUT the bytes again before its URL expires, or create another upload`,
          },
        ]);
      }
    }
    return findAccountMedia(db, accountId, ids);
  }

  /**
   * Completes or forgets uploads whose URL expired a while ago: staged bytes that pass the
   * checks become usable (the client uploaded in time and has not used them yet); anything
   * else is deleted, row and bytes. Returns how many of each.
   */
  async sweepExpired(
    log: Logger = silentLogger,
    signal?: AbortSignal,
  ): Promise<{ completed: number; dropped: number; failed: number }> {
    const { db, clock } = this.#deps;
    const before = new Date(clock.now().getTime() - sweepGraceMs);
    const swept = { completed: 0, dropped: 0, failed: 0 };
    // Pages by (expiry, id), so uploads that keep failing never hide the ones after them.
    let after: { expiresAt: Date; id: string } | undefined;
    for (;;) {
      const batch = await findExpiredUploads(db, before, sweepBatch, after);
      for (const upload of batch) {
        if (signal?.aborted) return swept;
        try {
          // Settling leaves staging empty whatever it finds; only the row remains to forget.
          if (isStaged(upload) && (await this.#settle(upload)) === 'ready') {
            swept.completed++;
            continue;
          }
          if (await deletePendingUpload(db, upload.id)) swept.dropped++;
        } catch (error) {
          // The store or the database is away: this upload is swept next time.
          swept.failed++;
          log.warn({ err: error, mediaId: upload.id }, 'an expired upload could not be swept');
        }
      }
      const last = batch.at(-1);
      if (batch.length < sweepBatch || last === undefined) break;
      after = { expiresAt: last.upload_expires_at!, id: last.id };
    }
    if (swept.completed + swept.dropped > 0) log.info(swept, 'expired uploads swept');
    return swept;
  }

  /**
   * Checks bytes a client put in staging. They leave staging once there is an outcome —
   * usable, or refused by the checks — and stay there when the check could not finish (the
   * store or the database away), for the next use or sweep to try again.
   */
  #settle(upload: MediaRow): Promise<Settled> {
    let settling = this.#settling.get(upload.id);
    if (settling === undefined) {
      settling = (async (): Promise<Settled> => {
        const { storage } = this.#deps;
        const read = await storage.getAtMost(upload.storage_key, upload.bytes);
        if (read === null) return 'absent';
        const settled = await this.#check(upload, read);
        // A copy left behind is never read again; the lifecycle rule on staging/ removes it.
        await storage.remove(upload.storage_key).catch(() => {});
        return settled;
      })().finally(() => this.#settling.delete(upload.id));
      this.#settling.set(upload.id, settling);
    }
    return settling;
  }

  async #check(upload: MediaRow, read: BoundedRead): Promise<'ready' | { refused: string }> {
    if (read.bytes === null) return { refused: lengthRefusal(read.size, upload.bytes) };
    const outcome = await this.#accept(upload, read.bytes);
    // Null: completed by another node meanwhile, and the bytes it stored are the ones in use.
    return outcome !== null && 'refused' in outcome ? outcome : 'ready';
  }

  /**
   * Checks the bytes of a pending upload and, if they pass, stores them under a key of this
   * attempt's own and makes the media usable. A concurrent attempt that completed first wins:
   * this one removes only what it stored and answers null.
   */
  async #accept(
    media: MediaRow,
    body: Buffer,
    signal?: AbortSignal,
  ): Promise<UploadedMedia | { readonly refused: string } | null> {
    const { db, storage, probe, limits } = this.#deps;
    if (body.length !== media.bytes) return { refused: lengthRefusal(body.length, media.bytes) };
    const kind = media.kind as UploadKind;
    const found = await inspectUpload(kind, body, { probe, limits, signal });
    if ('refused' in found) return found;
    const { ext, ...measured } = found;
    const attempt = randomBytes(4).toString('hex');
    const storageKey = `uploads/${media.account_id}/${media.id}-${attempt}.${ext}`;
    await storage.put(storageKey, body);
    if (!(await completeUpload(db, media.id, { ...measured, bytes: body.length, storageKey }))) {
      await storage.remove(storageKey);
      return null;
    }
    return { mediaId: media.id, kind, bytes: body.length, ...measured };
  }
}

function isStaged(media: MediaRow): boolean {
  return media.state === 'pending' && media.storage_key.startsWith(stagingPrefix);
}

function lengthRefusal(arrived: number, declared: number): string {
  return `${arrived} bytes arrived; createUpload declared ${declared}`;
}

function alreadyComplete(): AppError {
  return new AppError(ErrorCode.InvalidInput, 'This upload is already complete.', {
    field: 'mediaId',
    state: 'ready',
  });
}
