import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  classifyAddress,
  isPublicAddress,
  isPublicHostname,
} from '../../src/shared/public-address.ts';

// Globally routable unicast, both families: these must pass.
const publicAddresses = [
  '8.8.8.8',
  '1.1.1.1',
  '9.9.9.9',
  '93.184.215.14',
  '100.63.255.255', // just below CGNAT
  '100.128.0.0', // just above CGNAT
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.1', // beside 192.0.0.0/24 and 192.0.2.0/24
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '::ffff:8.8.8.8', // IPv4-mapped: judged by its IPv4 part
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '2c0f:fb50:4003::1',
  '2001:200::1', // beside 2001::/23
];

// One or more addresses of every IANA special-purpose range (RFC 6890 and its updates), and
// everything else that is not global unicast. Each must be refused.
const specialAddresses: [string, string][] = [
  ['0.0.0.0', '"this network" 0.0.0.0/8'],
  ['0.255.255.255', '0.0.0.0/8'],
  ['10.0.0.1', 'private 10/8'],
  ['10.255.255.255', 'private 10/8'],
  ['100.64.0.1', 'CGNAT 100.64.0.0/10'],
  ['100.127.255.254', 'CGNAT 100.64.0.0/10'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback 127/8'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'private 172.16/12'],
  ['192.0.0.1', 'IETF protocol assignments 192.0.0.0/24'],
  ['192.0.0.8', 'IPv4 dummy address'],
  ['192.0.0.170', 'NAT64/DNS64 discovery'],
  ['192.0.2.1', 'documentation TEST-NET-1'],
  ['192.31.196.1', 'AS112-v4'],
  ['192.52.193.1', 'AMT'],
  ['192.88.99.1', 'deprecated 6to4 relay anycast'],
  ['192.168.1.1', 'private 192.168/16'],
  ['192.175.48.1', 'direct delegation AS112'],
  ['198.18.0.1', 'benchmarking 198.18.0.0/15'],
  ['198.19.255.255', 'benchmarking 198.18.0.0/15'],
  ['198.51.100.7', 'documentation TEST-NET-2'],
  ['203.0.113.9', 'documentation TEST-NET-3'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved 240/4'],
  ['255.255.255.254', 'reserved 240/4'],
  ['255.255.255.255', 'limited broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
  ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated) ::/96'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::ffff:0:808:808', 'IPv4-translated ::ffff:0:0:0/96'],
  ['64:ff9b::808:808', 'NAT64 64:ff9b::/96'],
  ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
  ['64:ff9b:1::1', 'local-use NAT64 64:ff9b:1::/48'],
  ['100::1', 'discard-only 100::/64'],
  ['100:0:0:1::1', 'dummy prefix 100:0:0:1::/64'],
  ['2001::1', 'Teredo 2001::/32'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:1::1', 'port control protocol anycast'],
  ['2001:2::1', 'benchmarking 2001:2::/48'],
  ['2001:3::1', 'AMT 2001:3::/32'],
  ['2001:4:112::1', 'AS112-v6'],
  ['2001:10::1', 'deprecated ORCHID'],
  ['2001:20::1', 'ORCHIDv2'],
  ['2001:30::1', 'drone remote ID'],
  ['2001:1ff::1', 'IETF protocol assignments 2001::/23'],
  ['2001:db8::1', 'documentation 2001:db8::/32'],
  ['2002::1', '6to4 2002::/16'],
  ['2002:a00:1::1', '6to4 of 10.0.0.1'],
  ['2620:4f:8000::1', 'direct delegation AS112'],
  ['3fff::1', 'documentation 3fff::/20'],
  ['5f00::1', 'SRv6 SIDs 5f00::/16'],
  ['fc00::1', 'unique local fc00::/7'],
  ['fd12:3456:789a::1', 'unique local fd00::/8'],
  ['fe80::1', 'link-local fe80::/10'],
  ['febf::1', 'link-local fe80::/10'],
  ['fec0::1', 'deprecated site-local'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'global multicast'],
  ['4000::1', 'unassigned, outside 2000::/3'],
  ['e000::1', 'unassigned, outside 2000::/3'],
];

describe('isPublicAddress (shared/public-address.ts)', () => {
  it('lets globally routable unicast addresses of both families through', () => {
    for (const ip of publicAddresses) {
      assert.deepEqual(classifyAddress(ip), { public: true, range: 'unicast' }, ip);
      assert.equal(isPublicAddress(ip), true, ip);
    }
  });

  it('refuses every special-purpose range of both families, and says which', () => {
    for (const [ip, what] of specialAddresses) {
      const verdict = classifyAddress(ip);
      assert.equal(verdict.public, false, `${ip} (${what})`);
      assert.notEqual(verdict.range, 'unicast', `${ip} (${what})`);
      assert.equal(isPublicAddress(ip), false, `${ip} (${what})`);
    }
    assert.equal(classifyAddress('::ffff:10.0.0.1').range, 'ipv4Mapped private');
    assert.equal(classifyAddress('::8.8.8.8').range, 'notGlobalUnicast');
    assert.equal(classifyAddress('64:ff9b::808:808').range, 'rfc6052');
  });

  it('refuses what is not one canonical address: names, other notations, zones, CIDRs', () => {
    for (const input of [
      '',
      'localhost',
      'example.com',
      '0x7f.1',
      '2130706433',
      '127.1',
      '010.0.0.1',
      '8.8.8.8/32',
      '[::1]',
      'fe80::1%eth0',
      ' 8.8.8.8',
    ]) {
      assert.deepEqual(classifyAddress(input).public, false, JSON.stringify(input));
    }
  });
});

describe('isPublicHostname', () => {
  it('accepts multi-label names and public address literals', () => {
    for (const host of [
      'agent.example',
      'cdn.agent.example.',
      '8.8.8.8',
      '[2606:4700:4700::1111]',
    ]) {
      assert.equal(isPublicHostname(host), true, host);
    }
  });

  it('refuses local names and special address literals', () => {
    for (const host of [
      'localhost',
      'app.localhost',
      'printer.local',
      'vault.internal',
      'nas.home.arpa',
      'x.invalid',
      'intranet',
      '127.0.0.1',
      '10.1.2.3',
      '[::1]',
      '[::ffff:7f00:1]',
      '[fd00::1]',
      '',
    ]) {
      assert.equal(isPublicHostname(host), false, host);
    }
  });
});
