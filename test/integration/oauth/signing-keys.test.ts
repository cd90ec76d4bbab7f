import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { loadConfig } from '../../../src/config/config.ts';
import { sessionCookie } from '../../../src/edge/oauth/oauth-http.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, withTestApp } from '../../helpers/app.ts';
import {
  authorizeInBrowser,
  authorizeUrl,
  exchangeWithOauth4webapi,
  newPkce,
  TestBrowser,
} from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

describe('access-token signing keys', () => {
  let database: Database;
  let t: TestApp;
  withTestApp('pglite', {}, (started) => {
    ({ database, t } = started);
  });

  const token = async () => {
    const { account } = await seedAccount(t.app);
    const email = `keys-${account.id}@example.test`;
    await t.app.services.identityProvider!.addUser({
      accountId: account.id,
      email,
      password: 'a key test password',
    });
    const pkce = await newPkce();
    const redirectUri = 'http://localhost:40001/oauth/callback';
    const callback = await authorizeInBrowser(
      new TestBrowser(t.url),
      t.url,
      authorizeUrl(t.url, { clientId: 'atelier-local-tools', redirectUri, pkce }),
      {
        email,
        password: 'a key test password',
      },
    );
    return (
      await exchangeWithOauth4webapi(t.url, 'atelier-local-tools', redirectUri, callback, pkce)
    ).access_token;
  };

  it('rotate: new tokens use the new key; tokens of the old one still verify; both are published', async () => {
    const before = await token();
    const kid = await t.app.oauth.keys.rotate();
    const after = await token();
    assert.notEqual(decodeProtectedHeader(before).kid, kid);
    assert.equal(decodeProtectedHeader(after).kid, kid);
    await t.app.oauth.tokens.verify(before);
    await t.app.oauth.tokens.verify(after);
    const jwks = (await (await fetch(`${t.url}/oauth/jwks`)).json()) as {
      keys: Array<{ kid: string }>;
    };
    assert.deepEqual(
      jwks.keys.map((k) => k.kid).sort(),
      [decodeProtectedHeader(before).kid, kid].sort(),
    );
  });

  it('keys survive a restart: another app on the same database verifies the tokens', async () => {
    const issued = await token();
    const other = await startTestApp(database, { env: { PUBLIC_URL: t.url } });
    try {
      await other.app.oauth.tokens.verify(issued);
    } finally {
      await other.close();
    }
  });
});

describe('the browser session cookie', () => {
  it('is __Host-, Secure, HttpOnly and SameSite=Lax on an https deployment', () => {
    const { name, options } = sessionCookie(
      loadConfig({ env: { PUBLIC_URL: 'https://atelier.example.com' }, cwd: '/' }).oauth,
    );
    assert.equal(name, '__Host-atelier_session');
    assert.deepEqual(options, { path: '/', httpOnly: true, sameSite: 'lax', secure: true });
  });

  it('drops Secure and the prefix only for plain-http localhost development', () => {
    for (const url of ['http://localhost:8080', 'http://127.0.0.1:9999']) {
      const { name, options } = sessionCookie(
        loadConfig({ env: { PUBLIC_URL: url }, cwd: '/' }).oauth,
      );
      assert.deepEqual([name, options.secure], ['atelier_session', false], url);
    }
    const { options } = sessionCookie(
      loadConfig({ env: { PUBLIC_URL: 'http://atelier.internal' }, cwd: '/' }).oauth,
    );
    assert.equal(options.secure, true, 'any other http origin still gets Secure');
  });
});
