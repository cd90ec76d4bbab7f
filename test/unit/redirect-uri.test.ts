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
});
