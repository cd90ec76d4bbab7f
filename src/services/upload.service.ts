import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import type { Actor } from '../domain/actor.ts';
import type { MediaKind } from '../domain/media.ts';
import type { Ffmpeg } from '../engines/media/ffmpeg.ts';
import { decodeAudio } from '../engines/speech/audio.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import type { UrlSigner } from '../storage/url-signer.ts';
import type { Db } from '../store/database.ts';
import { completeUpload, findMedia, insertPendingUpload } from '../store/media.store.ts';

/** The types an upload may turn out to be, by kind (what the engines can read). */
const accepted: Readonly<Record<'image' | 'audio', readonly string[]>> = {
  image: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
  audio: ['audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/opus', 'audio/flac', 'audio/x-flac'],
};

/** Spellings of the same type that clients send; compared after this mapping. */
const aliases: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
  'audio/mp3': 'audio/mpeg',
  'audio/x-flac': 'audio/flac',
};

export interface UploadLimits {
  readonly maxBytes: number;
  /** Largest width or height of an uploaded image. */
  readonly maxImagePixels: number;
  readonly maxAudioSeconds: number;
  /** How long the signed PUT URL is valid. */
  readonly urlTtlMs: number;
}

export interface UploadServiceDeps {
  db: Db;
  signer: UrlSigner;
  storage: MediaStorage;
  ffmpeg: Ffmpeg;
  clock: Clock;
  limits: UploadLimits;
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

/**
 * Uploads in two steps: `createUpload` registers a pending media row and returns a signed PUT
 * URL; `receive` takes the bytes, finds their real type by content (never by what the client
 * declared), checks size, dimensions and duration, stores them, and only then makes the media
 * usable. Anything refused leaves the media pending: unusable, and retriable until the URL
 * expires.
 */
export class UploadService {
  readonly #deps: UploadServiceDeps;

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
    const { limits } = this.#deps;
    if (input.kind === 'video') {
      throw new AppError(
        ErrorCode.UnsupportedCombination,
        'kind: video uploads are not taken; upload an image (to animate, for elements and portraits) or audio (for avatars).',
        { field: 'kind', allowed: Object.keys(accepted) },
      );
    }
    const mimeType = normalType(input.mimeType);
    const problems = [];
    if (!accepted[input.kind].includes(mimeType)) {
      problems.push({
        field: 'mimeType',
        message: `must be one of ${accepted[input.kind].join(', ')} for ${input.kind}`,
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
    const expiresAt = new Date(this.#deps.clock.now().getTime() + limits.urlTtlMs);
    await insertPendingUpload(this.#deps.db, {
      id: mediaId,
      accountId: actor.accountId,
      kind: input.kind,
      mimeType,
      bytes: input.bytes,
      width: null,
      height: null,
      durationMs: null,
      storageKey: `uploads/${actor.accountId}/${mediaId}`,
      filename: filename ?? mediaId,
      expiresAt,
    });
    const signed = this.#deps.signer.signUpload(mediaId, expiresAt);
    return { mediaId, uploadUrl: signed.url, expiresAt: signed.expiresAt };
  }

  /** True when (mediaId, exp, sig) is a valid, unexpired upload URL. */
  verifyUrl(mediaId: string, exp: string | undefined, sig: string | undefined): boolean {
    return this.#deps.signer.verifyUpload(mediaId, exp, sig);
  }

  /** Checks and stores the bytes of a pending upload (the URL was verified by the caller). */
  async receive(mediaId: string, body: Buffer, signal?: AbortSignal): Promise<UploadedMedia> {
    const { db, storage } = this.#deps;
    const media = await findMedia(db, mediaId);
    if (media === undefined) {
      throw new AppError(ErrorCode.NotFound, `No upload "${mediaId}".`, { field: 'mediaId' });
    }
    if (media.state !== 'pending') {
      throw alreadyComplete();
    }
    if (body.length !== media.bytes) {
      throw invalidInput([
        {
          field: 'body',
          message: `${body.length} bytes arrived; createUpload declared ${media.bytes}`,
        },
      ]);
    }
    const kind = media.kind as 'image' | 'audio';
    const sniffed = await fileTypeFromBuffer(body);
    const mimeType = sniffed === undefined ? null : normalType(sniffed.mime);
    if (mimeType === null || !accepted[kind].includes(mimeType)) {
      throw invalidInput([
        {
          field: 'body',
          message: `the bytes are ${mimeType ?? 'of no recognised type'}, not ${kind} (${accepted[kind].join(', ')})`,
        },
      ]);
    }
    const found =
      kind === 'image' ? await this.#checkImage(body) : await this.#checkAudio(body, signal);
    const storageKey = `uploads/${media.account_id}/${mediaId}.${sniffed!.ext}`;
    await storage.put(storageKey, body);
    const completed = await completeUpload(db, mediaId, {
      mimeType,
      bytes: body.length,
      storageKey,
      ...found,
    });
    if (!completed) {
      await storage.remove(storageKey);
      throw alreadyComplete();
    }
    return { mediaId, kind, mimeType, bytes: body.length, ...found };
  }

  async #checkImage(body: Buffer) {
    const { maxImagePixels } = this.#deps.limits;
    let width: number | undefined;
    let height: number | undefined;
    try {
      ({ width, height } = await sharp(body, { failOn: 'error' }).metadata());
      // Decoding the whole image catches truncated and corrupt files that have a good header.
      await sharp(body, { failOn: 'error', limitInputPixels: maxImagePixels ** 2 }).stats();
    } catch {
      throw invalidInput([{ field: 'body', message: 'the image cannot be decoded' }]);
    }
    if (width === undefined || height === undefined) {
      throw invalidInput([{ field: 'body', message: 'the image has no dimensions' }]);
    }
    if (width > maxImagePixels || height > maxImagePixels || width < 16 || height < 16) {
      throw invalidInput([
        {
          field: 'body',
          message: `the image is ${width}x${height}; each side must be from 16 to ${maxImagePixels} pixels`,
        },
      ]);
    }
    return { width, height, durationMs: null };
  }

  /**
   * Decoding the whole audio (to 8 kHz mono: cheap) proves it is readable and measures it;
   * containers read from a pipe often do not state their duration.
   */
  async #checkAudio(body: Buffer, signal?: AbortSignal) {
    let durationMs = 0;
    try {
      const rate = 8000;
      const { samples } = await decodeAudio(this.#deps.ffmpeg, body, rate, signal ?? neverAborted);
      durationMs = Math.round((samples.length / rate) * 1000);
    } catch {
      // reported below
    }
    if (durationMs <= 0) {
      throw invalidInput([{ field: 'body', message: 'the audio cannot be read' }]);
    }
    if (durationMs > this.#deps.limits.maxAudioSeconds * 1000) {
      throw invalidInput([
        {
          field: 'body',
          message: `the audio lasts ${Math.round(durationMs / 1000)} s; at most ${this.#deps.limits.maxAudioSeconds} s`,
        },
      ]);
    }
    return { width: null, height: null, durationMs };
  }
}

const neverAborted = new AbortController().signal;

function alreadyComplete(): AppError {
  return new AppError(ErrorCode.InvalidInput, 'This upload is already complete.', {
    field: 'mediaId',
    state: 'ready',
  });
}

function normalType(mimeType: string): string {
  const type = mimeType.split(';')[0]!.trim().toLowerCase();
  return aliases[type] ?? type;
}

/**
 * The client's filename, for the download's Content-Disposition: no path, and anything that is
 * not printable ASCII (or is a quote) replaced, so it is always a valid header value.
 */
function safeFilename(name: string): string | null {
  const base = name.split(/[\\/]/).pop()!.trim();
  if (base.length === 0 || base.length > 200) return null;
  return base.replace(/[^\x20-\x7e]|["\\]/g, '_');
}
