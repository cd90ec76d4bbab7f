import { isIP } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock.ts';
import { isLoopbackHostname, loopbackHosts } from '../../shared/loopback.ts';
import { isPublicHostname } from '../../shared/public-address.ts';
import {
  loggedReason,
  privateAddressProblem,
  RefusedAnswerError,
} from '../../shared/public-fetch.ts';
import { fetchMetadataDocument, type MetadataFetchOptions } from './client-metadata-fetch.ts';
import type { OAuthClient } from './clients.ts';
import { OAuthError } from './oauth-error.ts';

/** Which documents are accepted, and how they are fetched. */
export interface ClientMetadataOptions extends MetadataFetchOptions {
  /** `*` (any public host) or the hosts whose documents are accepted. */
  allowedHosts: readonly string[] | '*';
  clock?: Clock;
  /** Documents kept at most; the oldest goes first. */
  maxCached?: number;
  /**
   * The development switch (OAUTH_CIMD_DEV_CA, never in production): a CA certificate (PEM).
   * Documents on `localhost`, `127.0.0.1` and `[::1]` are then fetched from this computer, and
   * only over a TLS connection whose certificate this CA issued; every other rule stays.
   */
  loopbackCa?: string;
}

// Any public host may serve documents by default, so the cache must not grow with whatever
// client_ids a stranger invents: a thousand clients is far more than one server meets.
const defaultMaxCached = 1_000;

interface Cached {
  client: OAuthClient;
  until: number;
}

/**
 * Client ID Metadata Documents (MCP authorization 2025-11-25): a client_id that is an HTTPS URL
 * names a JSON document describing the client. It is fetched with care — no redirects, a
 * short timeout, a small size cap, and every address the host resolves to must be public
 * (unless the development switch admits this computer's own hosts, see `loopbackCa`) —
 * fetched once for concurrent requests, cached as its Cache-Control allows (failures are not
 * cached; a bounded number of documents), and accepted only if it names the same URL as
 * client_id and lists redirect URIs.
 */
export class ClientMetadataDocuments {
  readonly #o: ClientMetadataOptions;
  readonly #cache = new Map<string, Cached>();
  readonly #inFlight = new Map<string, Promise<OAuthClient>>();

  constructor(options: ClientMetadataOptions) {
    this.#o = options;
  }

  async resolve(clientId: string): Promise<OAuthClient> {
    const { url, loopback } = this.#checkUrl(clientId);
    const cached = this.#cache.get(clientId);
    if (cached !== undefined && cached.until > this.#now()) return cached.client;
    // Concurrent authorizations for one uncached client share one fetch (one request to the
    // client's host, not one each); the entry goes when it settles, so a failure is not kept.
    let pending = this.#inFlight.get(clientId);
    if (pending === undefined) {
      pending = this.#load(clientId, url, loopback).finally(() => this.#inFlight.delete(clientId));
      this.#inFlight.set(clientId, pending);
    }
    return pending;
  }

  async #load(clientId: string, url: URL, loopback: boolean): Promise<OAuthClient> {
    // This computer's documents trust the development CA alone, not the system's or a test's.
    const options = loopback ? { ...this.#o, ca: this.#o.loopbackCa, loopback } : this.#o;
    const { body, cacheMs } = await fetchMetadataDocument(url, options).catch((error: unknown) => {
      const { message } = error as Error;
      // On this computer, what went wrong before an answer (refused, TLS, timed out) is said one
      // way: the socket's own words would tell whoever opens /oauth/authorize which local ports
      // are open. What the development CA's server answered (a status, a size) is said.
      throw refused(
        loopback && !(error instanceof RefusedAnswerError)
          ? 'cannot be fetched from this computer (no https server there answered with a certificate from OAUTH_CIMD_DEV_CA)'
          : `cannot be fetched (${message})`,
        loggedReason(error),
      );
    });
    const client = parseDocument(clientId, body);
    // Cached before the in-flight entry goes: a request arriving in between finds one or the other.
    if (cacheMs > 0) this.#remember(clientId, { client, until: this.#now() + cacheMs });
    return client;
  }

  #remember(clientId: string, entry: Cached): void {
    this.#cache.delete(clientId); // re-inserted last: a Map iterates oldest first
    const max = this.#o.maxCached ?? defaultMaxCached;
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size < max) break;
      this.#cache.delete(oldest);
    }
    this.#cache.set(clientId, entry);
  }

  #now(): number {
    return (this.#o.clock ?? systemClock).now().getTime();
  }

  /** The URL to fetch, and whether it is on this computer (admitted by the development switch). */
  #checkUrl(clientId: string): { url: URL; loopback: boolean } {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      throw refusedId('is not a URL');
    }
    if (
      url.protocol !== 'https:' ||
      url.username !== '' ||
      url.password !== '' ||
      url.hash !== '' ||
      url.pathname === '/'
    ) {
      throw refusedId('must be an https URL with a path, without credentials or fragment');
    }
    // One client, one spelling: a URL the parser rewrites (dot segments, encoded dots, case,
    // a default port) would be a second client_id for the same document, and an empty query
    // or fragment is kept by the parser but is not canonical either.
    if (url.href !== clientId || /[?#]$/.test(clientId)) {
      throw refusedId(
        `is not in canonical form (no dot segments, default port, upper case or empty query): ${url.href.replace(/[?#]+$/, '')}`,
      );
    }
    const hosts = this.#o.allowedHosts;
    if (hosts !== '*' && !hosts.includes(url.hostname))
      throw refusedId('is on a host this server does not accept');
    if (this.#o.loopbackCa !== undefined && loopbackHosts.includes(url.hostname))
      return { url, loopback: true };
    // A literal is connected to without a lookup, so it is checked here.
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const problem = isIP(literal) === 0 ? null : privateAddressProblem(literal);
    if (problem !== null) throw refusedId(`points at ${problem}`);
    return { url, loopback: false };
  }
}

/**
 * A document becomes a client only if every field it sets is one Atelier can honour: a public
 * client (no secret, `none` at the token endpoint — a secret published on the web is no
 * secret) whose URLs are https on public hosts (they are shown on the consent page). A field
 * that is present and wrong refuses the document rather than being dropped.
 */
function parseDocument(clientId: string, body: string): OAuthClient {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw refused('is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw refused('is not a JSON object');
  }
  const doc = parsed as Record<string, unknown>;
  if (doc.client_id !== clientId) throw refused('names another client_id than its own URL');
  const uris = doc.redirect_uris;
  if (
    !Array.isArray(uris) ||
    uris.length === 0 ||
    !uris.every((u) => typeof u === 'string' && URL.canParse(u))
  ) {
    throw refused('lists no valid redirect_uris');
  }
  for (const uri of uris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem !== null) throw refused(`has a redirect URI ${problem}: ${uri}`);
  }
  for (const field of ['client_secret', 'client_secret_expires_at']) {
    if (field in doc) throw refused(`holds a ${field}; only public clients are supported`);
  }
  if ('token_endpoint_auth_method' in doc && doc.token_endpoint_auth_method !== 'none') {
    throw refused(
      `asks for token_endpoint_auth_method ${quote(doc.token_endpoint_auth_method)}; only public clients (none) are supported`,
    );
  }
  for (const field of ['client_uri', 'logo_uri', 'jwks_uri']) {
    if (field in doc && !isPublicHttpsUrl(doc[field])) {
      throw refused(`has a ${field} that is not an https URL on a public host`);
    }
  }
  const name = doc.client_name;
  return {
    clientId,
    name: typeof name === 'string' && name.length <= 500 ? name : new URL(clientId).hostname,
    redirectUris: uris as string[],
    clientUri: (doc.client_uri as string | undefined) ?? null,
    logoUri: (doc.logo_uri as string | undefined) ?? null,
    source: 'metadata-document',
  };
}

/**
 * Where a metadata document may send the person's browser (RFC 8252 §7, OAuth 2.1 §2.3.1):
 * https; plain http only to a loopback callback of an app on this computer; or a native app's
 * private-use scheme in reverse-domain form (`com.example.app:/callback`). Never a scheme that
 * runs or reads something in the browser itself (`javascript:`, `data:`, `file:`…), never
 * credentials or a fragment.
 */
function redirectUriProblem(uri: string): string | null {
  const url = new URL(uri);
  if (url.hash !== '' || uri.includes('#')) return 'with a fragment';
  if (url.username !== '' || url.password !== '') return 'with credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    return isLoopbackHostname(url.hostname)
      ? null
      : 'over plain http to a host other than this computer';
  }
  return /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol)
    ? null
    : `with the scheme ${url.protocol} (https, loopback http, or a reverse-domain app scheme)`;
}

function isPublicHttpsUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    url.protocol === 'https:' &&
    url.username === '' &&
    url.password === '' &&
    isPublicHostname(url.hostname)
  );
}

/** A document's value, short enough for an error page. */
function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function refused(reason: string, detail?: string): OAuthError {
  return new OAuthError(
    'invalid_client',
    `The client's metadata document ${reason}.`,
    false,
    400,
    detail,
  );
}

/** A client_id URL refused before anything is fetched. */
function refusedId(reason: string): OAuthError {
  return new OAuthError('invalid_client', `The client_id ${reason}.`, false);
}
