/**
 * Whether a URL's hostname (as `new URL(…).hostname` spells it) names this computer:
 * `localhost`, an address of 127.0.0.0/8, or `[::1]` (RFC 8252 §7.3 loopback redirects).
 */
export function isLoopbackHostname(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}
