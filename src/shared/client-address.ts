import ipaddr from 'ipaddr.js';

/**
 * The key a per-address limit counts a client under. An IPv4 address (also written as
 * IPv4-mapped IPv6) is itself; an IPv6 address counts by its /64, the smallest network a
 * single customer is usually given, so walking through the addresses of one's own prefix does
 * not buy a fresh window each time. Anything unparsable is kept as it is.
 */
export function clientAddressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const prefix = v6.toNormalizedString().split(':').slice(0, 4).join(':');
  return `${prefix}::/64`;
}
