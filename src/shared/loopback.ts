/**
 * Whether a URL's hostname (as `new URL(…).hostname` spells it) names this computer:
 * `localhost`, an address of 127.0.0.0/8, or `[::1]` (RFC 8252 §7.3 loopback redirects).
 */
export function isLoopbackHostname(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * This computer's names, spelled as in a URL: the loopback IP literals RFC 8252 §7.3 names, and
 * `localhost` (spec §4.3). Each stays itself: other 127.0.0.0/8 addresses or other spellings of
 * `::1` are not among them.
 */
export const loopbackHosts: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** The hosts whose registered portless `http` callback accepts any port. */
export const anyPortCallbackHosts = loopbackHosts;
