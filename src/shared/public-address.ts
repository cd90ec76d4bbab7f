import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * What an address is, for a server-side request to a host someone else chose (SSRF): `public`
 * only for globally routable unicast; otherwise `range` names why not, in ipaddr.js's words
 * (`private`, `loopback`, `linkLocal`, `rfc6052`, `6to4`, `teredo`, `reserved`, …), or
 * `notGlobalUnicast` (IPv6 outside 2000::/3) or `invalid`. An IPv4-mapped address is judged by
 * its IPv4 part and says so (`ipv4Mapped private`).
 */
export interface AddressClass {
  readonly public: boolean;
  readonly range: string;
}

// IPv6 global unicast is 2000::/3 (RFC 4291 §2.4, IANA): everything else is unassigned or
// special — IPv4-compatible ::/96, discard-only 100::/64, the dummy prefix 100:0:0:1::/64,
// SRv6 5f00::/16 — whether or not ipaddr.js names it.
const globalUnicast = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Classifies one IP address (no DNS: a host name is `invalid`). Covers every special-purpose
 * range of the IANA registries (RFC 6890 and later) in both families, through ipaddr.js's
 * range table (pinned; test/unit/public-address.test.ts holds it to the list) plus the
 * 2000::/3 rule above. NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 and Teredo are refused
 * whole rather than unwrapped: nothing Atelier fetches needs them.
 */
export function classifyAddress(ip: string): AddressClass {
  const family = isIP(ip);
  if (family === 4) {
    // Dotted decimal only: ipaddr.js would also read 0x7f.1 or 010.0.0.1 (as inet_aton does).
    if (!ipaddr.IPv4.isValidFourPartDecimal(ip)) return { public: false, range: 'invalid' };
    return classifyIPv4(ipaddr.IPv4.parse(ip));
  }
  const asUrl = `http://[${ip}]/`;
  if (family !== 6 || ip.includes('%') || !URL.canParse(asUrl)) {
    return { public: false, range: 'invalid' };
  }
  // WHATWG URL's parser writes the address canonically (::8.8.8.8 becomes ::808:808): ipaddr.js
  // alone would take that IPv4-compatible form for an IPv4-mapped one.
  const address = ipaddr.IPv6.parse(new URL(asUrl).hostname.slice(1, -1));
  if (address.isIPv4MappedAddress()) {
    const inner = classifyIPv4(address.toIPv4Address());
    return inner.public ? inner : { public: false, range: `ipv4Mapped ${inner.range}` };
  }
  const range = address.range();
  if (range !== 'unicast') return { public: false, range };
  if (!address.match(globalUnicast)) return { public: false, range: 'notGlobalUnicast' };
  return { public: true, range };
}

function classifyIPv4(address: ipaddr.IPv4): AddressClass {
  const range = address.range();
  return { public: range === 'unicast', range };
}

/** True only for a globally routable unicast address (see {@link classifyAddress}). */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip).public;
}

// Names that never lead to the public internet (RFC 6761, RFC 6762, RFC 8375, ICANN's
// .internal); a single label is a name on the local network.
const localNames = /(^|\.)(localhost|local|internal|home\.arpa|invalid)$/;

/**
 * Whether a URL's hostname (as `URL.hostname` gives it: lower case, IPv6 in brackets) can be a
 * public host: a public address, or a multi-label name outside the local-only domains. A name
 * still has to resolve to public addresses when something connects to it.
 */
export function isPublicHostname(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (isIP(host) !== 0) return isPublicAddress(host);
  return host.includes('.') && !localNames.test(host);
}
