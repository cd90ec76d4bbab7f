import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from '../../src/auth/api-key.ts';

describe('API key format (spec §2, §5.1)', () => {
  it('is svc_ followed by 32 characters from [A-Za-z0-9]', () => {
    for (let i = 0; i < 200; i++) {
      const { secret } = generateApiKey();
      assert.match(secret, /^svc_[A-Za-z0-9]{32}$/);
      assert.equal(isWellFormedApiKey(secret), true);
    }
  });

  it('refuses any single mistyped character through the checksum', () => {
    const { secret } = generateApiKey();
    for (let i = 4; i < secret.length; i++) {
      const replacement = secret[i] === 'a' ? 'b' : 'a';
      const typo = secret.slice(0, i) + replacement + secret.slice(i + 1);
      assert.equal(isWellFormedApiKey(typo), false, `position ${i}`);
    }
  });

  it('refuses truncated, padded and foreign tokens', () => {
    const { secret } = generateApiKey();
    for (const candidate of [
      secret.slice(0, -1),
      `${secret}x`,
      secret.replace('svc_', 'sk_'),
      '',
      'eyJhbGciOiJSUzI1NiJ9.e30.sig',
    ]) {
      assert.equal(isWellFormedApiKey(candidate), false, candidate);
    }
  });

  it('stores a hash that is not the key and a prefix that is only its start', () => {
    const key = generateApiKey();
    assert.equal(key.secretHash, hashApiKey(key.secret));
    assert.match(key.secretHash, /^[0-9a-f]{64}$/);
    assert.equal(key.secretHash.includes(key.secret.slice(4)), false);
    assert.equal(key.prefix, key.secret.slice(0, 8));
  });

  it('never repeats', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => generateApiKey().secret));
    assert.equal(seen.size, 1000);
  });
});
