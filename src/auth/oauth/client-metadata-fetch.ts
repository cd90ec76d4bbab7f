import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress } from '../../shared/public-address.ts';

/** How a host name becomes the addresses to connect to: DNS (getaddrinfo) unless a test says. */
export type ResolveHost = (hostname: string) => Promise<readonly LookupAddress[]>;

const resolveWithDns: ResolveHost = (hostname) => dnsLookup(hostname, { all: true });

/** How a Client ID Metadata Document may be fetched; the defaults are production's. */
export interface MetadataFetchOptions {
  timeoutMs?: number;
  maxBytes?: number;
  resolveHost?: ResolveHost;
  /** Tests only: trust this CA. */
  ca?: string;
  /**
   * Tests only: the address dialled for one that passed the check, so that a test's public
   * addresses can reach a local server. Production dials the checked address itself. There is
   * deliberately no way to turn the check off: tests that skipped it hid a bug that refused
   * every IPv4 host.
   */
  dialAddress?: (checked: string) => string;
}

/** A fetched document: its text and how long it may be cached (ms; 0: not at all). */
export interface FetchedDocument {
  body: string;
  cacheMs: number;
}

const maxCacheMs = 86_400_000; // a day at most, whatever the document says
const defaultCacheMs = 300_000; // five minutes when it says nothing

/**
 * Why an address literal written in a URL may not be fetched from, or null when it may: every
 * special-purpose range of both families is refused (shared/public-address.ts).
 */
export function privateAddressProblem(address: string): string | null {
  const verdict = classifyAddress(address);
  return verdict.public ? null : `a private address (${address}: ${verdict.range})`;
}

/**
 * GETs `url` with care: no redirects, a deadline over the whole exchange, a size cap, and the
 * socket connects only to addresses that were checked — every address the name resolves to
 * must be public, and they are handed to the socket as they are (no second resolution, so no
 * DNS-rebinding gap). An address literal in the URL is checked by the caller.
 */
export function fetchMetadataDocument(
  url: URL,
  options: MetadataFetchOptions,
): Promise<FetchedDocument> {
  const maxBytes = options.maxBytes ?? 5_120;
  const timeoutMs = options.timeoutMs ?? 3_000;
  const lookup = checkedLookup(options);
  return new Promise<FetchedDocument>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json' },
        lookup,
        timeout: timeoutMs,
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(
            new Error(
              `HTTP ${res.statusCode}${res.statusCode && res.statusCode < 400 ? ', redirects are not followed' : ''}`,
            ),
          );
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new Error(`larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({
            body: Buffer.concat(chunks).toString('utf8'),
            cacheMs: cacheLifetime(res.headers['cache-control']),
          }),
        );
        res.on('error', reject);
      },
    );
    // `timeout` bounds a silent socket; this bounds the whole exchange (a server dripping a
    // byte at a time never goes silent).
    const deadline = setTimeout(() => req.destroy(new Error('timed out')), timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The socket's `lookup`: resolves, refuses the name if any address is not public (a name that
 * also points inside is not a client's website), and answers in the shape net asked for.
 */
export function checkedLookup(options: MetadataFetchOptions): LookupFunction {
  const resolveHost = options.resolveHost ?? resolveWithDns;
  const dial = options.dialAddress ?? ((address: string) => address);
  const addressesOf = async (hostname: string, family: number): Promise<LookupAddress[]> => {
    const resolved = await resolveHost(hostname);
    for (const { address } of resolved) {
      // The range, not the address: a name in this server's own DNS may be internal, and the
      // error page is shown to whoever asked.
      const verdict = classifyAddress(address);
      if (!verdict.public) {
        throw new Error(`${hostname} resolves to a private address (${verdict.range})`);
      }
    }
    const usable = resolved
      .filter((a) => family === 0 || a.family === family)
      .map((a) => dial(a.address))
      .map((address) => ({ address, family: isIP(address) }));
    if (usable.length === 0) throw new Error(`${hostname} has no address`);
    return usable;
  };
  return (hostname, lookupOptions, callback) => {
    const asked = lookupOptions.family;
    const family = asked === 4 || asked === 'IPv4' ? 4 : asked === 6 || asked === 'IPv6' ? 6 : 0;
    addressesOf(hostname, family).then(
      (addresses) => {
        if (lookupOptions.all) return callback(null, addresses);
        const [first] = addresses as [LookupAddress];
        callback(null, first.address, first.family);
      },
      (error: Error) => callback(error, '', 0),
    );
  };
}

function cacheLifetime(header: string | undefined): number {
  if (header === undefined) return defaultCacheMs;
  if (/no-store|no-cache|private/i.test(header)) return 0;
  const maxAge = /max-age=(\d+)/i.exec(header);
  return maxAge === null ? defaultCacheMs : Math.min(Number(maxAge[1]) * 1000, maxCacheMs);
}
