import { createHmac } from 'node:crypto';
import type { SignedUrl } from '../domain/media.ts';
import type { Clock } from '../shared/clock.ts';
import { constantTimeEqual } from '../shared/secrets.ts';

type Purpose = 'download' | 'upload';

/**
 * Expiring download URLs: `/media/:id?exp=<unix seconds>&sig=<HMAC-SHA256(id.exp)>`. The URL
 * is the capability: whoever holds it may download until `exp`, so it is short-lived and a
 * fresh one is minted at every read (spec §1: re-read to refresh an expired URL).
 */
export class UrlSigner {
  readonly #key: Buffer;
  readonly #publicUrl: string;
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(options: { key: Buffer; publicUrl: string; clock: Clock; ttlMs: number }) {
    this.#key = options.key;
    this.#publicUrl = options.publicUrl;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
  }

  /** A download URL, valid for the configured time. */
  sign(mediaId: string): SignedUrl {
    const exp = Math.floor((this.#clock.now().getTime() + this.#ttlMs) / 1000);
    return this.#url('download', mediaId, exp);
  }

  /** True when `sig` is this server's download signature of (mediaId, exp), not expired. */
  verify(mediaId: string, exp: string | undefined, sig: string | undefined): boolean {
    return this.#verify('download', mediaId, exp, sig);
  }

  /** A `PUT /uploads/:id` URL until `expiresAt`; it cannot serve as a download URL. */
  signUpload(mediaId: string, expiresAt: Date): SignedUrl {
    return this.#url('upload', mediaId, Math.floor(expiresAt.getTime() / 1000));
  }

  verifyUpload(mediaId: string, exp: string | undefined, sig: string | undefined): boolean {
    return this.#verify('upload', mediaId, exp, sig);
  }

  #url(purpose: Purpose, mediaId: string, exp: number): SignedUrl {
    const sig = this.#mac(purpose, mediaId, exp);
    const route = purpose === 'download' ? 'media' : 'uploads';
    return {
      mediaId,
      url: `${this.#publicUrl}/${route}/${encodeURIComponent(mediaId)}?exp=${exp}&sig=${sig}`,
      expiresAt: new Date(exp * 1000),
    };
  }

  #verify(
    purpose: Purpose,
    mediaId: string,
    exp: string | undefined,
    sig: string | undefined,
  ): boolean {
    if (exp === undefined || sig === undefined || !/^\d{1,12}$/.test(exp)) return false;
    if (!constantTimeEqual(sig, this.#mac(purpose, mediaId, Number(exp)))) return false;
    return Number(exp) * 1000 > this.#clock.now().getTime();
  }

  /** Downloads keep the original MAC input, so URLs issued before uploads existed stay valid. */
  #mac(purpose: Purpose, mediaId: string, exp: number): string {
    const input = purpose === 'download' ? `${mediaId}.${exp}` : `upload.${mediaId}.${exp}`;
    return createHmac('sha256', this.#key).update(input).digest('base64url');
  }
}
