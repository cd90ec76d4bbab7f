import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { loopbackHosts } from './loopback.ts';
import {
  type AddressCheckOptions,
  checkedLookup,
  loopbackLookup,
  privateAddressProblem,
} from './public-fetch.ts';

// A POST to a URL an account chose (a webhook endpoint): the same address filter as every
// outbound request to a host a user chose, no redirects, a deadline over the whole exchange,
// and only the start of the answer kept.

export interface PublicPostOptions extends AddressCheckOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
  /** How much of the answer's body is kept (the rest is read and dropped, up to `maxBytes`). */
  readonly excerptBytes: number;
  /** The answer is cut off past this size. */
  readonly maxBytes: number;
  /** `localhost` and loopback literals only, no DNS (a development switch admits them). */
  readonly loopback?: boolean;
}

/** What the other side answered: its status and the start of its body. */
export interface PostAnswer {
  readonly status: number;
  readonly excerpt: string;
}

/** Whether a URL names this computer as a development switch admits it (`localhost`, …). */
export function isLoopbackUrl(url: URL): boolean {
  return loopbackHosts.includes(url.hostname);
}

/** Why a URL may not be posted to, or null when it may (the caller decides about loopback). */
export function postTargetProblem(url: URL, loopback: boolean): string | null {
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (loopback) return isLoopbackUrl(url) ? null : `${url.hostname} is not this computer`;
  if (url.protocol !== 'https:') return 'only https URLs are allowed';
  if (isIP(literal) !== 0) return privateAddressProblem(literal);
  return null;
}

/**
 * POSTs `body` to `url` and resolves with the answer, whatever its status; rejects with a
 * readable reason when there is none (`timed out`, a private address, refused).
 */
export function postPublic(url: URL, options: PublicPostOptions): Promise<PostAnswer> {
  const problem = postTargetProblem(url, options.loopback === true);
  if (problem !== null) return Promise.reject(new Error(problem));
  const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const literal = isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0;
  return new Promise<PostAnswer>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { ...options.headers, 'content-length': Buffer.byteLength(options.body) },
        // An address literal was checked above; a name is checked as the socket dials it.
        ...(literal ? {} : { lookup: options.loopback ? loopbackLookup : checkedLookup(options) }),
        timeout: options.timeoutMs,
      },
      (res) => {
        const kept: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < options.excerptBytes) kept.push(chunk);
          size += chunk.length;
          if (size > options.maxBytes) res.destroy();
        });
        const answer = () =>
          resolve({
            status: res.statusCode ?? 0,
            excerpt: Buffer.concat(kept).subarray(0, options.excerptBytes).toString('utf8'),
          });
        res.on('end', answer);
        res.on('close', answer); // cut off past maxBytes: the status still counts
        res.on('error', () => answer());
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error('timed out')), options.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}
