import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { decoyHash } from '../../../src/auth/password.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

const password = 'correct horse battery';

describeEachBackend('the built-in identity provider', (backend) => {
  let database: Database;
  let t: TestApp;
  /** The pauses slowed sign-ins took, recorded instead of slept through. */
  const pauses: number[] = [];
  const signInPause = async (ms: number) => pauses.push(ms);
  withTestApp(
    backend,
    { env: { IDP_SIGN_IN_LIMIT: '4', TRUST_PROXY: '1' }, signInPause },
    (started) => {
      ({ database, t } = started);
    },
  );

  const signIn = (email: string, secret: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/idp/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ email, password: secret }),
    });
  const newUser = async (email: string) => {
    const { account } = await seedAccount(t.app);
    await t.app.services.identityProvider!.addUser({ accountId: account.id, email, password });
    return account;
  };

  it('publishes discovery and its public keys, never a private part', async () => {
    const discovery = (await (
      await fetch(`${t.url}/idp/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    assert.equal(discovery.issuer, `${t.url}/idp`);
    assert.equal(discovery.jwks_uri, `${t.url}/idp/jwks`);
    assert.deepEqual(discovery.id_token_signing_alg_values_supported, ['RS256']);
    const jwks = (await (await fetch(`${t.url}/idp/jwks`)).json()) as {
      keys: Array<Record<string, unknown>>;
    };
    assert.equal(jwks.keys.length, 1);
    assert.equal(jwks.keys[0]?.kty, 'RSA');
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi'])
      assert.equal(secret in jwks.keys[0]!, false, secret);
  });

  it('signs in with email and password; the 1-hour ID token authenticates GraphQL as the linked account', async () => {
    const account = await newUser('Ada@Example.test');
    const res = await signIn('ada@example.test', password);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { idToken, expiresAt } = (await res.json()) as { idToken: string; expiresAt: string };
    const claims = decodeJwt(idToken);
    assert.equal(decodeProtectedHeader(idToken).alg, 'RS256');
    assert.deepEqual(
      [claims.iss, claims.aud, claims.email],
      [`${t.url}/idp`, 'atelier', 'ada@example.test'],
    );
    assert.equal(claims.exp! - claims.iat!, 3600);
    assert.equal(Date.parse(expiresAt), claims.exp! * 1000);
    const me = await graphql<{ getUserByPrivateId: { id: string } }>(t.url, {
      query: '{ getUserByPrivateId { id } }',
      headers: { 'x-idp-token': idToken },
    });
    assert.equal(me.body.data?.getUserByPrivateId.id, account.id);
  });

  it('an unknown email and a wrong password get the same answer after the same work', async () => {
    await newUser('grace@example.test');
    const attempt = async (email: string, secret: string) => {
      const res = await signIn(email, secret);
      const body = (await res.json()) as { error: { code: string; message: string } };
      return [res.status, body.error.code, body.error.message];
    };
    const wrong = await attempt('grace@example.test', 'nope-password');
    const unknown = await attempt('nobody@example.test', 'whatever-password');
    for (const answer of [wrong, unknown])
      assert.deepEqual(answer, [401, '100101', 'Wrong email or password.']);
    // The same work, shown without a clock: an unknown email's password is verified against
    // the decoy hash, and argon2id's cost is all in the parameters a hash carries, so the
    // decoy's must be a real user's.
    const stored = await database.db
      .selectFrom('idp_users')
      .select('password_hash')
      .where('email', '=', 'grace@example.test')
      .executeTakeFirstOrThrow();
    const parameters = (hash: string) => hash.split('$').slice(1, 4).join('$');
    assert.equal(parameters(stored.password_hash), 'argon2id$v=19$m=19456,t=2,p=1');
    assert.equal(parameters(await decoyHash), parameters(stored.password_hash));
  });

  it('a burst of parallel guesses from one address gets no more tries than one at a time', async () => {
    await newUser('burst@example.test');
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        signIn('burst@example.test', `guess-${i}-password`, {
          'x-forwarded-for': '198.51.100.77',
        }),
      ),
    );
    const statuses = burst.map((r) => r.status).sort();
    assert.deepEqual(
      statuses,
      [...Array(4).fill(401), ...Array(8).fill(429)],
      'IDP_SIGN_IN_LIMIT (4) checked, whatever the timing',
    );
  });

  it('an IPv6 client counts by its /64: other addresses of the prefix are no fresh start', async () => {
    await newUser('prefix@example.test');
    const from = (address: string) =>
      signIn('prefix@example.test', 'wrong-password-again', { 'x-forwarded-for': address });
    for (let i = 1; i <= 4; i++) assert.equal((await from(`2001:db8:7:7::${i}`)).status, 401);
    assert.equal((await from('2001:db8:7:7::beef')).status, 429);
    assert.equal((await from('2001:db8:7:8::1')).status, 401, 'another /64 is another client');
  });

  it('failures count per (email, address): a stranger who failed is refused (150029), the person still signs in from their own', async () => {
    await newUser('hopper@example.test');
    const from = (address: string, secret: string, email = 'hopper@example.test') =>
      signIn(email, secret, { 'x-forwarded-for': address });
    for (const address of ['198.51.100.1', '198.51.100.2']) {
      for (let i = 0; i < 4; i++) {
        const res = await from(address, `wrong-password-${i}`);
        assert.equal(res.status, 401, `${address} attempt ${i + 1}`);
        assert.equal(res.headers.get('ratelimit-remaining'), String(3 - i), 'per (email, address)');
      }
    }
    // The first address has used its failures for this email, even with the right password.
    const limited = await from('198.51.100.1', password);
    assert.equal(limited.status, 429);
    const body = (await limited.json()) as { error: { code: string; retryAfterSeconds: number } };
    assert.equal(body.error.code, '150029');
    assert.equal(body.error.retryAfterSeconds, Number(limited.headers.get('retry-after')));
    assert.ok(body.error.retryAfterSeconds > 0 && body.error.retryAfterSeconds <= 900);
    // Eight failures for the email slow its sign-ins down (at most a second), never refuse them.
    pauses.length = 0;
    const own = await from('203.0.113.9', password);
    assert.equal(own.status, 200, 'the right password from an address that has not failed');
    assert.deepEqual(pauses, [1000], 'slowed down by the longest pause');
    assert.equal(
      (await from('198.51.100.1', 'x-password', 'someone-else@example.test')).status,
      401,
    );
  });

  it('a malformed sign-in request is a 400 with 120001', async () => {
    const res = await fetch(`${t.url}/idp/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.c' }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, '120001');
  });

  it('the signing key is kept in the database: tokens survive a restart', async () => {
    await newUser('lovelace@example.test');
    const { idToken } = (await (await signIn('lovelace@example.test', password)).json()) as {
      idToken: string;
    };
    const restarted = await startTestApp(database, { env: { PUBLIC_URL: t.url } });
    try {
      const res = await graphql(restarted.url, {
        query: '{ getUserByPrivateId { id } }',
        headers: { 'x-idp-token': idToken },
      });
      assert.deepEqual(errorCodes(res), []);
    } finally {
      await restarted.close();
    }
  });

  it('refuses a weak password or a taken email, and creates nothing', async () => {
    const { account } = await seedAccount(t.app);
    const idp = t.app.services.identityProvider!;
    await assert.rejects(
      idp.addUser({ accountId: account.id, email: 'weak@example.test', password: 'short' }),
      /password/,
    );
    await idp.addUser({ accountId: account.id, email: 'taken@example.test', password });
    await assert.rejects(
      idp.addUser({ accountId: account.id, email: 'TAKEN@example.test', password }),
      /already/,
    );
    assert.equal((await signIn('weak@example.test', 'short')).status, 401);
  });
});
