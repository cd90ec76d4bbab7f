import type { Actor } from '../domain/actor.ts';
import type { SignedUrl } from '../domain/media.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { sharp } from '../shared/sharp.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import type { UrlSigner } from '../storage/url-signer.ts';
import type { Db } from '../store/database.ts';
import { findMedia } from '../store/media.store.ts';
import type { ReadyMedia } from './upload.service.ts';
import type { VoiceModelView, VoiceService } from './voice.service.ts';

/** A file to send for a valid download URL. */
/** What a valid download URL leads to: a local file the API serves, or the object store. */
export type Download =
  | { readonly path: string; readonly mimeType: string; readonly filename: string }
  | { readonly redirect: string };

const maxIdsPerCall = 100;

/** Download URLs for the account's media, and the check behind `GET /media/:id`. */
export class MediaService {
  readonly #db: Db;
  readonly #signer: UrlSigner;
  readonly #storage: MediaStorage;
  readonly #voices: VoiceService;
  readonly #readyMedia: ReadyMedia;
  readonly #renderPreview: (voice: VoiceModelView) => Promise<Buffer>;
  readonly #previews = new Map<string, Promise<string>>();

  constructor(deps: {
    db: Db;
    signer: UrlSigner;
    storage: MediaStorage;
    voices: VoiceService;
    /** Usable media of an account (completing uploads on their first use). */
    readyMedia: ReadyMedia;
    /** A short MP3 sample of a voice. */
    renderPreview: (voice: VoiceModelView) => Promise<Buffer>;
  }) {
    this.#db = deps.db;
    this.#signer = deps.signer;
    this.#storage = deps.storage;
    this.#voices = deps.voices;
    this.#readyMedia = deps.readyMedia;
    this.#renderPreview = deps.renderPreview;
  }

  /**
   * Fresh signed URLs, in the order asked. Every ID must be media of the caller's account:
   * one that is not (unknown, or another account's) fails the whole call with 140004, so no
   * partial answer hints at what exists elsewhere.
   */
  async downloadUrls(actor: Actor, mediaIds: readonly string[]): Promise<SignedUrl[]> {
    if (mediaIds.length === 0 || mediaIds.length > maxIdsPerCall) {
      throw invalidInput([{ field: 'mediaIds', message: `give 1 to ${maxIdsPerCall} IDs` }]);
    }
    const unique = [...new Set(mediaIds)];
    // Voice previews are everyone's, and free; the rest must be the account's.
    const found = new Set<string>();
    for (const id of unique) if ((await this.#voices.previewOf(id)) !== undefined) found.add(id);
    const own = unique.filter((id) => !found.has(id));
    for (const media of await this.#readyMedia(actor.accountId, own, 'mediaIds'))
      found.add(media.id);
    const missing = unique.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new AppError(
        ErrorCode.NotFound,
        `No media ${missing.map((id) => `"${id}"`).join(', ')} in this account.`,
        {
          field: 'mediaIds',
          missing,
        },
      );
    }
    return mediaIds.map((id) => this.#signer.sign(id));
  }

  /**
   * A small WebP of an image of the account (for clients that show results inline), at most
   * `maxSide` pixels a side; null when the media is not an image.
   */
  async thumbnail(actor: Actor, mediaId: string, maxSide = 512): Promise<Buffer | null> {
    const [media] = await this.#readyMedia(actor.accountId, [mediaId], 'mediaId');
    if (media === undefined) {
      throw new AppError(ErrorCode.NotFound, `No media "${mediaId}" in this account.`, {
        field: 'mediaId',
      });
    }
    if (media.kind !== 'image') return null;
    return sharp(await this.#storage.get(media.storage_key))
      .resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
  }

  /**
   * The bytes and type of one media file of the account, for an answer that carries the file
   * itself (`/v1`); 140004 when it is not the account's or not ready.
   */
  async read(actor: Actor, mediaId: string): Promise<{ bytes: Buffer; mimeType: string }> {
    const [media] = await this.#readyMedia(actor.accountId, [mediaId], 'mediaId');
    if (media === undefined) {
      throw new AppError(ErrorCode.NotFound, `No media "${mediaId}" in this account.`, {
        field: 'mediaId',
      });
    }
    return { bytes: await this.#storage.get(media.storage_key), mimeType: media.mime_type };
  }

  /**
   * The file behind a download URL, or null when the signature is wrong or expired; 140004
   * when the URL is valid but its media was deleted.
   */
  async resolveDownload(
    mediaId: string,
    exp: string | undefined,
    sig: string | undefined,
  ): Promise<Download | null> {
    if (!this.#signer.verify(mediaId, exp, sig)) return null;
    const voice = await this.#voices.previewOf(mediaId);
    if (voice !== undefined) {
      const key = await this.#preview(voice);
      return this.#serve(key, exp, 'audio/mpeg', `${voice.voiceModelId}-preview.mp3`);
    }
    const media = await findMedia(this.#db, mediaId);
    // Signed by this server, so it existed: deleted since (deleteContent, an expired upload).
    if (media === undefined) {
      throw new AppError(ErrorCode.NotFound, 'This media no longer exists: it was deleted.');
    }
    // A pending upload's key may hold bytes nobody has checked: never served.
    if (media.state !== 'ready') return null;
    return this.#serve(media.storage_key, exp, media.mime_type, media.filename);
  }

  /**
   * The file on local disk, or a presigned URL on the object store that expires when the
   * download URL does (`exp`, already verified).
   */
  async #serve(key: string, exp: string | undefined, mimeType: string, filename: string) {
    const expiresAt = new Date(Number(exp) * 1000);
    const redirect = await this.#storage.presignedGet(key, { expiresAt, mimeType, filename });
    if (redirect !== null) return { redirect };
    const path = this.#storage.localPath(key);
    return path === null ? null : { path, mimeType, filename };
  }

  /** The preview's storage key, rendered once per voice and kept in storage. */
  async #preview(voice: VoiceModelView): Promise<string> {
    const key = `previews/${voice.previewMediaId ?? voice.voiceModelId}.mp3`;
    let rendering = this.#previews.get(key);
    if (rendering === undefined) {
      rendering = (async () => {
        if (!(await this.#storage.exists(key)))
          await this.#storage.put(key, await this.#renderPreview(voice));
        return key;
      })();
      this.#previews.set(key, rendering);
      rendering.catch(() => this.#previews.delete(key));
    }
    return rendering;
  }
}
