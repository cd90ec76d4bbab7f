import { type AddressCheckOptions, fetchPublic } from '../../shared/public-fetch.ts';

/** How a Client ID Metadata Document may be fetched; the defaults are production's. */
export interface MetadataFetchOptions extends AddressCheckOptions {
  timeoutMs?: number;
  maxBytes?: number;
  /** Trust this CA alone: the development switch's, or a test's. */
  ca?: string;
  /** The document is on this computer (shared/public-fetch.ts `loopback`). */
  loopback?: boolean;
}

/** A fetched document: its text and how long it may be cached (ms; 0: not at all). */
export interface FetchedDocument {
  body: string;
  cacheMs: number;
}

const maxCacheMs = 86_400_000; // a day at most, whatever the document says
const defaultCacheMs = 300_000; // five minutes when it says nothing

/**
 * GETs a document with care (shared/public-fetch.ts): no redirects, a deadline over the whole
 * exchange, a size cap, and a socket that dials only checked public addresses (or, for a
 * `loopback` document, only this computer). An address literal in the URL is checked by the
 * caller.
 */
export async function fetchMetadataDocument(
  url: URL,
  options: MetadataFetchOptions,
): Promise<FetchedDocument> {
  const { bytes, headers } = await fetchPublic(url, {
    ...options,
    accept: 'application/json',
    maxBytes: options.maxBytes ?? 5_120,
    timeoutMs: options.timeoutMs ?? 3_000,
  });
  return { body: bytes.toString('utf8'), cacheMs: cacheLifetime(headers['cache-control']) };
}

function cacheLifetime(header: string | undefined): number {
  if (header === undefined) return defaultCacheMs;
  if (/no-store|no-cache|private/i.test(header)) return 0;
  const maxAge = /max-age=(\d+)/i.exec(header);
  return maxAge === null ? defaultCacheMs : Math.min(Number(maxAge[1]) * 1000, maxCacheMs);
}
