import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientAddressKey } from '../../src/shared/client-address.ts';

describe('clientAddressKey (what per-address limits count by)', () => {
  it('keeps IPv4 as it is, also when written IPv4-mapped', () => {
    assert.equal(clientAddressKey('203.0.113.9'), '203.0.113.9');
    assert.equal(clientAddressKey('::ffff:203.0.113.9'), '203.0.113.9');
  });

  it('counts IPv6 by its /64: every address of one prefix is one client', () => {
    const a = clientAddressKey('2001:db8:1:2::1');
    assert.equal(a, '2001:db8:1:2::/64');
    assert.equal(clientAddressKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), a);
    assert.equal(clientAddressKey('2001:0db8:0001:0002:0000:0000:0000:0042'), a);
    assert.notEqual(clientAddressKey('2001:db8:1:3::1'), a);
  });

  it('leaves what is not an address alone', () => {
    assert.equal(clientAddressKey('unknown'), 'unknown');
  });
});
