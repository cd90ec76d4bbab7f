import { createHmac } from 'node:crypto';
import type { Clock } from '../shared/clock.ts';
import { constantTimeEqual } from '../shared/secrets.ts';

export interface SignedUrl {
  readonly mediaId: string;
  readonly url: string;
  readonly expiresAt: Date;
}

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

  sign(mediaId: string): SignedUrl {
    const exp = Math.floor((this.#clock.now().getTime() + this.#ttlMs) / 1000);
    const sig = this.#mac(mediaId, exp);
    return {
      mediaId,
      url: `${this.#publicUrl}/media/${encodeURIComponent(mediaId)}?exp=${exp}&sig=${sig}`,
      expiresAt: new Date(exp * 1000),
    };
  }

  /** True when `sig` is this server's signature of (mediaId, exp) and exp has not passed. */
  verify(mediaId: string, exp: string | undefined, sig: string | undefined): boolean {
    if (exp === undefined || sig === undefined || !/^\d{1,12}$/.test(exp)) return false;
    if (!constantTimeEqual(sig, this.#mac(mediaId, Number(exp)))) return false;
    return Number(exp) * 1000 > this.#clock.now().getTime();
  }

  #mac(mediaId: string, exp: number): string {
    return createHmac('sha256', this.#key).update(`${mediaId}.${exp}`).digest('base64url');
  }
}
