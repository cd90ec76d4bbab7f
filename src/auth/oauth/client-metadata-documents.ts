import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request } from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { OAuthClient } from './clients.ts';
import { OAuthError } from './oauth-error.ts';

/** Addresses a server-side fetch must never reach (SSRF): private, loopback, link-local, … */
const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

function isForbidden(address: string): boolean {
  const family = isIP(address);
  return family === 0 || forbidden.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface MetadataFetchOptions {
  /** `*` (any public host) or the hosts whose documents are accepted. */
  allowedHosts: readonly string[] | '*';
  timeoutMs?: number;
  maxBytes?: number;
  /** Tests only: let the fetch reach loopback, and trust this CA. */
  allowPrivateAddresses?: boolean;
  ca?: string;
}

interface Cached {
  client: OAuthClient;
  until: number;
}

const maxCacheMs = 86_400_000; // a day at most, whatever the document says
const defaultCacheMs = 300_000; // five minutes when it says nothing

/**
 * Client ID Metadata Documents (MCP authorization 2025-11-25): a client_id that is an HTTPS URL
 * names a JSON document describing the client. It is fetched with care — no redirects, a
 * short timeout, a small size cap, and the address actually connected to must be public —
 * cached as its Cache-Control allows (failures are not cached), and accepted only if it names
 * the same URL as client_id and lists redirect URIs.
 */
export class ClientMetadataDocuments {
  readonly #o: MetadataFetchOptions;
  readonly #cache = new Map<string, Cached>();

  constructor(options: MetadataFetchOptions) {
    this.#o = options;
  }

  async resolve(clientId: string): Promise<OAuthClient> {
    const cached = this.#cache.get(clientId);
    if (cached !== undefined && cached.until > Date.now()) return cached.client;
    const url = this.#checkUrl(clientId);
    const { body, cacheMs } = await this.#fetch(url).catch((error: unknown) => {
      throw refused(`cannot be fetched (${(error as Error).message})`);
    });
    const client = parseDocument(clientId, body);
    if (cacheMs > 0) this.#cache.set(clientId, { client, until: Date.now() + cacheMs });
    return client;
  }

  #checkUrl(clientId: string): URL {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      throw refused('is not a URL');
    }
    if (
      url.protocol !== 'https:' ||
      url.username !== '' ||
      url.password !== '' ||
      url.hash !== '' ||
      url.pathname === '/'
    ) {
      throw refused('must be an https URL with a path, without credentials or fragment');
    }
    const hosts = this.#o.allowedHosts;
    if (hosts !== '*' && !hosts.includes(url.hostname))
      throw refused('is on a host this server does not accept');
    if (
      !this.#o.allowPrivateAddresses &&
      isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0 &&
      isForbidden(url.hostname.replace(/^\[|\]$/g, ''))
    ) {
      throw refused('points at a private address');
    }
    return url;
  }

  #fetch(url: URL): Promise<{ body: string; cacheMs: number }> {
    const maxBytes = this.#o.maxBytes ?? 5_120;
    const allowPrivate = this.#o.allowPrivateAddresses === true;
    // The check runs on the address the socket will connect to, after DNS: no rebinding gap.
    const lookup = (
      hostname: string,
      options: object,
      callback: (e: Error | null, a: string | LookupAddress[], f?: number) => void,
    ) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        const usable = allowPrivate ? addresses : addresses.filter((a) => !isForbidden(a.address));
        if (usable.length === 0) return callback(new Error('it resolves to a private address'), []);
        callback(null, usable);
      });
    };
    const timeoutMs = this.#o.timeoutMs ?? 3_000;
    return new Promise<{ body: string; cacheMs: number }>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'GET',
          headers: { accept: 'application/json' },
          lookup,
          timeout: timeoutMs,
          ...(this.#o.ca ? { ca: this.#o.ca } : {}),
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
}

function cacheLifetime(header: string | undefined): number {
  if (header === undefined) return defaultCacheMs;
  if (/no-store|no-cache|private/i.test(header)) return 0;
  const maxAge = /max-age=(\d+)/i.exec(header);
  return maxAge === null ? defaultCacheMs : Math.min(Number(maxAge[1]) * 1000, maxCacheMs);
}

function parseDocument(clientId: string, body: string): OAuthClient {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw refused('is not JSON');
  }
  if (doc.client_id !== clientId) throw refused('names another client_id than its own URL');
  const uris = doc.redirect_uris;
  if (
    !Array.isArray(uris) ||
    uris.length === 0 ||
    !uris.every((u) => typeof u === 'string' && URL.canParse(u))
  ) {
    throw refused('lists no valid redirect_uris');
  }
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') {
    throw refused('asks for client authentication; only public clients (none) are supported');
  }
  const text = (value: unknown) =>
    typeof value === 'string' && value.length <= 500 ? value : null;
  const https = (value: unknown) =>
    typeof value === 'string' && value.startsWith('https://') ? value : null;
  return {
    clientId,
    name: text(doc.client_name) ?? new URL(clientId).hostname,
    redirectUris: uris as string[],
    clientUri: https(doc.client_uri),
    logoUri: https(doc.logo_uri),
    source: 'metadata-document',
  };
}

function refused(reason: string): OAuthError {
  return new OAuthError('invalid_client', `The client's metadata document ${reason}.`, false);
}
