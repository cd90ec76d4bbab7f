import { anyPortCallbackHosts } from '../../shared/loopback.ts';

/** After `http://<host>`: an optional canonical port, then the path and raw query, no fragment. */
const afterHost = /^(?::([1-9][0-9]{0,4}))?((?:\/[^?#]*)?(?:\?[^#]*)?)$/;

interface LoopbackCallback {
  readonly host: string;
  readonly port: string | null;
  /** Path and raw query, exactly as written. */
  readonly rest: string;
}

/**
 * Spec §4.3 "Redirect URI matching", widened by RFC 8252 §7.3: fixed-port loopback and HTTPS
 * callbacks match exactly, character for character; for an explicitly registered portless
 * `http://localhost`, `http://127.0.0.1` or `http://[::1]` callback, any canonical port from 1
 * to 65535 (no leading zero) is accepted while scheme, host, path and raw query stay exact.
 * The host never changes: `127.0.0.1` does not stand for `localhost` or the reverse (RFC 8252
 * varies only the port, and the consent page shows the host the browser returns to).
 * Userinfo, fragments, a prefix or a longer path all fail, because nothing but these two rules
 * ever matches.
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const asked = loopbackCallback(requested);
  if (asked === null || asked.port === null || Number(asked.port) > 65_535) return false;
  return registered.some((uri) => {
    const own = loopbackCallback(uri);
    return own !== null && own.port === null && own.host === asked.host && own.rest === asked.rest;
  });
}

function loopbackCallback(uri: string): LoopbackCallback | null {
  for (const host of anyPortCallbackHosts) {
    const origin = `http://${host}`;
    if (!uri.startsWith(origin)) continue;
    const parts = afterHost.exec(uri.slice(origin.length));
    return parts === null ? null : { host, port: parts[1] ?? null, rest: parts[2]! };
  }
  return null;
}
