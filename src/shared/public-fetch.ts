import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress } from './public-address.ts';

// A GET to a URL someone else chose (a client's metadata document, a provider's output link):
// no redirects, a deadline over the whole exchange, a size cap, and — for a host that must be
// public — a socket that dials only addresses that were checked (no DNS-rebinding gap).

/** How a host name becomes the addresses to connect to: DNS (getaddrinfo) unless a test says. */
export type ResolveHost = (hostname: string) => Promise<readonly LookupAddress[]>;

const resolveWithDns: ResolveHost = (hostname) => dnsLookup(hostname, { all: true });

/** How the addresses of a public host are found and dialled; the defaults are production's. */
export interface AddressCheckOptions {
  resolveHost?: ResolveHost;
  /**
   * Tests only: the address dialled for one that passed the check, so that a test's public
   * addresses can reach a local server. Production dials the checked address itself. There is
   * deliberately no way to turn the check off: tests that skipped it hid a bug that refused
   * every IPv4 host.
   */
  dialAddress?: (checked: string) => string;
}

export interface PublicFetchOptions extends AddressCheckOptions {
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly accept?: string;
  /** Further request headers (a credential only for a host the operator configured). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborts the exchange (with the signal's reason). */
  readonly signal?: AbortSignal;
  /** Trust this CA alone: a test's, or the CIMD development switch's (OAUTH_CIMD_DEV_CA). */
  readonly ca?: string;
  /**
   * Skips the address check: only for a host the operator configured (a provider's own
   * origin), never for one a remote party chose.
   */
  readonly trustedHost?: boolean;
  /**
   * Dials this computer only, for a URL on `localhost`, `127.0.0.1` or `[::1]` that a
   * development switch admits (OAUTH_CIMD_DEV_CA): `localhost` is answered with the loopback
   * addresses, never asked of DNS, and any other name is refused. The caller checks the host.
   */
  readonly loopback?: boolean;
}

export interface FetchedBytes {
  readonly bytes: Buffer;
  readonly headers: IncomingHttpHeaders;
}

/**
 * Why an address literal written in a URL may not be fetched from, or null when it may: every
 * special-purpose range of both families is refused (shared/public-address.ts).
 */
export function privateAddressProblem(address: string): string | null {
  const verdict = classifyAddress(address);
  return verdict.public ? null : `a private address (${address}: ${verdict.range})`;
}

/**
 * A host that may not be reached from here: it resolves to a special-purpose address, to none
 * of the family asked for, or not at all. The message is one for all of them, for it is shown
 * to whoever named the host (anyone, for a client's metadata document): which one it is would
 * map this server's network (an internal name resolves, another does not). `detail` says which,
 * for the log.
 */
export class NoPublicAddressError extends Error {
  override readonly name = 'NoPublicAddressError';
  readonly detail: string;
  constructor(hostname: string, detail: string) {
    super(`${hostname} has no public address`);
    this.detail = detail;
  }
}

/** What the log may say of a failed fetch or post: the reason behind a uniform message. */
export function loggedReason(error: unknown): string {
  return error instanceof NoPublicAddressError ? error.detail : (error as Error).message;
}

/**
 * The server answered, and the answer was refused (a status other than 200, too large): what
 * it says is about the server's answer, never about whether a socket could be opened.
 */
export class RefusedAnswerError extends Error {}

/**
 * GETs `url` and resolves with its body when the answer is 200; rejects with a readable reason
 * otherwise (`HTTP 302, redirects are not followed`, `larger than N bytes`, `timed out`, a
 * private address). An address literal in the URL is checked by the caller.
 */
export function fetchPublic(url: URL, options: PublicFetchOptions): Promise<FetchedBytes> {
  const { maxBytes, timeoutMs } = options;
  const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise<FetchedBytes>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        headers: { ...options.headers, accept: options.accept ?? '*/*' },
        ...(options.trustedHost === true
          ? {}
          : { lookup: options.loopback === true ? loopbackLookup : checkedLookup(options) }),
        timeout: timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          const status = res.statusCode ?? 0;
          const why = status >= 300 && status < 400 ? ', redirects are not followed' : '';
          return reject(new RefusedAnswerError(`HTTP ${status}${why}`));
        }
        res.on('error', reject);
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          res.destroy(new RefusedAnswerError(`larger than ${maxBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            res.destroy(new RefusedAnswerError(`larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ bytes: Buffer.concat(chunks), headers: res.headers }));
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
 * also points inside is not a public website), and answers in the shape net asked for.
 */
export function checkedLookup(options: AddressCheckOptions): LookupFunction {
  const resolveHost = options.resolveHost ?? resolveWithDns;
  const dial = options.dialAddress ?? ((address: string) => address);
  const addressesOf = async (hostname: string, family: number): Promise<LookupAddress[]> => {
    let resolved: readonly LookupAddress[];
    try {
      resolved = await resolveHost(hostname);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new NoPublicAddressError(hostname, `${hostname} does not resolve (${code})`);
    }
    for (const { address } of resolved) {
      const verdict = classifyAddress(address);
      if (!verdict.public) {
        throw new NoPublicAddressError(
          hostname,
          `${hostname} resolves to a private address (${address}: ${verdict.range})`,
        );
      }
    }
    const usable = resolved
      .filter((a) => family === 0 || a.family === family)
      .map((a) => dial(a.address))
      .map((address) => ({ address, family: isIP(address) }));
    if (usable.length === 0) {
      throw new NoPublicAddressError(hostname, `${hostname} has no IPv${family} address`);
    }
    return usable;
  };
  return (hostname, lookupOptions, callback) => {
    addressesOf(hostname, familyAsked(lookupOptions)).then(
      (addresses) => answerLookup(lookupOptions, callback, addresses),
      (error: Error) => callback(error, '', 0),
    );
  };
}

type LookupOptions = Parameters<LookupFunction>[1];
type LookupCallback = Parameters<LookupFunction>[2];

/** The address family a socket's lookup asks for: 4, 6, or 0 for either. */
function familyAsked(lookupOptions: LookupOptions): 0 | 4 | 6 {
  const asked = lookupOptions.family;
  return asked === 4 || asked === 'IPv4' ? 4 : asked === 6 || asked === 'IPv6' ? 6 : 0;
}

/** Answers a socket's lookup in the shape it asked for: every address, or the first. */
function answerLookup(
  lookupOptions: LookupOptions,
  callback: LookupCallback,
  addresses: LookupAddress[],
): void {
  if (lookupOptions.all) {
    callback(null, addresses);
    return;
  }
  const [first] = addresses as [LookupAddress];
  callback(null, first.address, first.family);
}

// RFC 6761 §6.3: `localhost` is this computer, whatever a resolver (or /etc/hosts) says.
const loopbackAddresses: readonly LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** The socket's `lookup` for {@link PublicFetchOptions.loopback}: `localhost` only, no DNS. */
export const loopbackLookup: LookupFunction = (hostname, lookupOptions, callback) => {
  if (hostname !== 'localhost') {
    callback(new Error(`${hostname} is not this computer`), '', 0);
    return;
  }
  const family = familyAsked(lookupOptions);
  answerLookup(
    lookupOptions,
    callback,
    loopbackAddresses.filter((a) => family === 0 || a.family === family),
  );
};
