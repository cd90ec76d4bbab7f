export type MediaKind = 'image' | 'video' | 'audio';

/** A time-limited address of one media object, as every edge hands it out. */
export interface SignedUrl {
  readonly mediaId: string;
  readonly url: string;
  readonly expiresAt: Date;
}
