import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redirectUriMatches } from '../../src/auth/oauth/redirect-uri.ts';

// Spec §4.3 "Redirect URI matching", rule by rule, without a server.
describe('redirect URI matching', () => {
  const https = ['https://app.example/callback?x=1'];
  const fixedPort = ['http://localhost:8080/cb'];
  const portless = ['http://localhost/cb?tab=a'];

  it('HTTPS and fixed-port localhost callbacks match exactly, character for character', () => {
    assert.equal(redirectUriMatches(https, 'https://app.example/callback?x=1'), true);
    assert.equal(redirectUriMatches(fixedPort, 'http://localhost:8080/cb'), true);
    for (const other of [
      'https://app.example/callback?x=2',
      'https://app.example/callback',
      'https://app.example/callback?x=1#f',
      'https://APP.example/callback?x=1',
      'https://app.example/callback/more?x=1',
      'https://user@app.example/callback?x=1',
    ]) {
      assert.equal(redirectUriMatches(https, other), false, other);
    }
    assert.equal(redirectUriMatches(fixedPort, 'http://localhost:8081/cb'), false);
    assert.equal(redirectUriMatches(fixedPort, 'http://localhost/cb'), false);
  });

  it('a portless localhost callback takes any canonical port, path and query exact', () => {
    for (const port of [1, 80, 8080, 65_535]) {
      const uri = `http://localhost:${port}/cb?tab=a`;
      assert.equal(redirectUriMatches(portless, uri), true, uri);
    }
    assert.equal(redirectUriMatches(['http://localhost'], 'http://localhost:5000'), true);
  });

  it('refuses a port out of range or not canonical, and every other change', () => {
    for (const uri of [
      'http://localhost:0/cb?tab=a',
      'http://localhost:65536/cb?tab=a',
      'http://localhost:080/cb?tab=a',
      'http://localhost:8080/cb?tab=b',
      'http://localhost:8080/cb',
      'http://localhost:8080/cb/x?tab=a',
      'http://localhost:8080/cb?tab=a#frag',
      'http://127.0.0.1:8080/cb?tab=a',
      'http://[::1]:8080/cb?tab=a',
      'https://localhost:8080/cb?tab=a',
      'http://user@localhost:8080/cb?tab=a',
    ]) {
      assert.equal(redirectUriMatches(portless, uri), false, uri);
    }
  });

  it('a port on the request never widens a fixed-port or HTTPS registration', () => {
    assert.equal(redirectUriMatches(fixedPort, 'http://localhost:9090/cb'), false);
    assert.equal(redirectUriMatches(['https://localhost/cb'], 'http://localhost:443/cb'), false);
  });

  // RFC 8252 §7.3: the loopback IP literals take any port, like portless localhost (issue 18).
  const ipv4 = ['http://127.0.0.1/cb?tab=a'];
  const ipv6 = ['http://[::1]/cb?tab=a'];

  it('a portless 127.0.0.1 or [::1] callback takes any canonical port, path and query exact', () => {
    for (const port of [1, 80, 6274, 65_535]) {
      assert.equal(redirectUriMatches(ipv4, `http://127.0.0.1:${port}/cb?tab=a`), true, `${port}`);
      assert.equal(redirectUriMatches(ipv6, `http://[::1]:${port}/cb?tab=a`), true, `${port}`);
    }
    assert.equal(redirectUriMatches(['http://127.0.0.1'], 'http://127.0.0.1:5000'), true);
    assert.equal(redirectUriMatches(['http://[::1]'], 'http://[::1]:5000'), true);
  });

  it('a loopback IP callback varies in its port only: path, query, scheme and host stay exact', () => {
    for (const uri of [
      'http://127.0.0.1:0/cb?tab=a',
      'http://127.0.0.1:65536/cb?tab=a',
      'http://127.0.0.1:080/cb?tab=a',
      'http://127.0.0.1:8080/cb?tab=b',
      'http://127.0.0.1:8080/cb',
      'http://127.0.0.1:8080/cb/x?tab=a',
      'http://127.0.0.1:8080/cb?tab=a#frag',
      'https://127.0.0.1:8080/cb?tab=a',
      'http://user@127.0.0.1:8080/cb?tab=a',
      'http://127.0.0.2:8080/cb?tab=a',
      'http://127.0.0.1.example:8080/cb?tab=a',
      'http://127.0.0.1:8080@evil.example/cb?tab=a',
    ]) {
      assert.equal(redirectUriMatches(ipv4, uri), false, uri);
    }
    for (const uri of [
      'http://[::1]:0/cb?tab=a',
      'http://[::1]:8080/cb?tab=b',
      'http://[::1]:8080/cb/x?tab=a',
      'https://[::1]:8080/cb?tab=a',
      'http://[0:0:0:0:0:0:0:1]:8080/cb?tab=a',
      'http://[::ffff:127.0.0.1]:8080/cb?tab=a',
    ]) {
      assert.equal(redirectUriMatches(ipv6, uri), false, uri);
    }
  });

  it('localhost, 127.0.0.1 and [::1] never stand for one another', () => {
    for (const uri of ['http://localhost:8080/cb?tab=a', 'http://[::1]:8080/cb?tab=a']) {
      assert.equal(redirectUriMatches(ipv4, uri), false, uri);
    }
    for (const uri of ['http://localhost:8080/cb?tab=a', 'http://127.0.0.1:8080/cb?tab=a']) {
      assert.equal(redirectUriMatches(ipv6, uri), false, uri);
    }
    // And the portless localhost registration of the tests above never takes an IP literal.
    assert.equal(redirectUriMatches(portless, 'http://127.0.0.1:8080/cb?tab=a'), false);
    assert.equal(redirectUriMatches(portless, 'http://[::1]:8080/cb?tab=a'), false);
  });

  it('a fixed-port loopback IP callback matches exactly', () => {
    const fixed = ['http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb'];
    assert.equal(redirectUriMatches(fixed, 'http://127.0.0.1:8080/cb'), true);
    assert.equal(redirectUriMatches(fixed, 'http://[::1]:8080/cb'), true);
    assert.equal(redirectUriMatches(fixed, 'http://127.0.0.1:8081/cb'), false);
    assert.equal(redirectUriMatches(fixed, 'http://[::1]:8081/cb'), false);
    assert.equal(redirectUriMatches(fixed, 'http://127.0.0.1/cb'), false);
  });
});
