import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { generateKeyPair } from 'jose';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { TestIssuer } from '../../helpers/oidc-issuer.ts';
import { seedAccount } from '../../helpers/seed.ts';

const me = '{ __typename getUserByPrivateId { id alias } }';
type Me = { __typename: string; getUserByPrivateId: { id: string; alias: string } | null };

describeEachBackend(
  'ID tokens of an external OpenID provider on X-IdP-Token (spec §5.2)',
  (backend) => {
    let database: Database;
    let issuer: TestIssuer;
    let t: TestApp;
    const idpEnv = () => ({
      IDP_ISSUER: issuer.url,
      IDP_AUDIENCE: issuer.clientId,
      IDP_CREATE_ACCOUNTS: 'true',
      IDP_JWKS_REFRESH_FLOOR_MS: '0',
    });
    before(async () => {
      database = await createTestDatabase(backend);
      issuer = await TestIssuer.start();
      t = await startTestApp(database, { env: idpEnv() });
    });
    after(async () => {
      await t.close();
      await issuer.stop();
      await database.close();
    });

    const asToken = (token: string, apiKey?: string) =>
      graphql<Me>(t.url, {
        query: me,
        headers: { 'x-idp-token': token },
        ...(apiKey ? { apiKey } : {}),
      });

    it('a valid token opens an account on first sign-in, and maps to the same one after', async () => {
      const first = await asToken(await issuer.mint({ sub: 'alice' }));
      assert.deepEqual(errorCodes(first), []);
      const account = first.body.data!.getUserByPrivateId!;
      assert.match(account.id, /^acc_/);
      assert.match(account.alias, /^alice-/);
      const again = await asToken(await issuer.mint({ sub: 'alice' }));
      assert.equal(again.body.data?.getUserByPrivateId?.id, account.id);
      const bob = await asToken(await issuer.mint({ sub: 'bob' }));
      assert.notEqual(bob.body.data?.getUserByPrivateId?.id, account.id);
    });

    const bad: Array<[string, () => Promise<string>]> = [
      ['wrong audience', () => issuer.mint({ aud: 'another-client' })],
      ['wrong issuer', () => issuer.mint({ iss: 'https://evil.example' })],
      ['expired', () => issuer.mint({}, { expiresIn: -3_600 })],
      [
        'alg none',
        async () => {
          const [, payload] = (await issuer.mint()).split('.');
          return `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
        },
      ],
      [
        'HS256 keyed with the public key',
        () =>
          issuer.mint(
            {},
            { header: { alg: 'HS256' }, key: new TextEncoder().encode(issuer.publicJwkText()) },
          ),
      ],
      [
        'a key the issuer does not publish (unknown kid)',
        async () =>
          issuer.mint(
            {},
            { header: { kid: 'rogue' }, key: (await generateKeyPair('RS256')).privateKey },
          ),
      ],
      [
        'tampered payload',
        async () => {
          const [header, payload, signature] = (await issuer.mint({ sub: 'carol' })).split('.');
          const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<
            string,
            unknown
          >;
          const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString(
            'base64url',
          );
          return `${header}.${forged}.${signature}`;
        },
      ],
      ['not a JWT at all', async () => 'hello'],
      ['an API key', async () => `svc_${'A'.repeat(32)}`],
    ];
    const messages = new Set<string>();
    for (const [label, make] of bad) {
      it(`refuses ${label} with HTTP 401 and 100101 like an invalid API key`, async () => {
        const requestId = `bad-idp-token-${messages.size}`;
        const before = await t.app.database.db
          .selectFrom('accounts')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow();
        const res = await graphql<{ getUserByPrivateId: unknown }>(t.url, {
          query: me,
          headers: { 'x-idp-token': await make(), 'x-request-id': requestId },
        });
        assert.equal(res.status, 401);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
        assert.deepEqual(errorCodes(res), ['100101']);
        assert.equal(res.body.data, null, 'nothing was executed');
        messages.add(res.body.errors![0]!.message);
        assert.equal(messages.size, 1, 'one generic message for every failed check');
        // Which check failed is in the log, under the request id, and only there.
        const logged = t
          .logs()
          .split('\n')
          .find((line) => line.includes(`"reqId":"${requestId}"`) && line.includes('refused'));
        assert.match(logged ?? '', /ID token refused: /);
        const after = await t.app.database.db
          .selectFrom('accounts')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow();
        assert.equal(after.n, before.n, 'no account was opened');
      });
    }

    it('follows a key rotation at the issuer without a restart', async () => {
      const before = await asToken(await issuer.mint({ sub: 'rotating' }));
      assert.deepEqual(errorCodes(before), []);
      await issuer.rotate();
      const after = await asToken(await issuer.mint({ sub: 'rotating' }));
      assert.deepEqual(errorCodes(after), []);
      assert.equal(
        after.body.data?.getUserByPrivateId?.id,
        before.body.data?.getUserByPrivateId?.id,
      );
    });

    it('an unreachable issuer gives 100102 (retryable), not 100101', async () => {
      const down = await TestIssuer.start();
      const token = await down.mint();
      await down.stop();
      const app = await startTestApp(database, {
        env: { IDP_ISSUER: down.url, IDP_AUDIENCE: down.clientId, IDP_CREATE_ACCOUNTS: 'true' },
      });
      try {
        const res = await graphql(app.url, { query: me, headers: { 'x-idp-token': token } });
        assert.deepEqual(errorCodes(res), ['100102']);
        assert.equal(res.body.errors?.[0]?.extensions?.retryable, true);
      } finally {
        await app.close();
      }
    });

    it('without account creation, an unknown identity is refused with 100101', async () => {
      const app = await startTestApp(database, {
        env: { ...idpEnv(), IDP_CREATE_ACCOUNTS: 'false' },
      });
      try {
        assert.deepEqual(
          errorCodes(
            await graphql(app.url, {
              query: me,
              headers: { 'x-idp-token': await issuer.mint({ sub: 'stranger' }) },
            }),
          ),
          ['100101'],
        );
      } finally {
        await app.close();
      }
    });

    it('a suspended account: 100101; a deleted one: 110206', async () => {
      const res = await asToken(await issuer.mint({ sub: 'dave' }));
      const id = res.body.data!.getUserByPrivateId!.id;
      await t.app.services.accounts.update(id, { status: 'suspended' });
      assert.deepEqual(errorCodes(await asToken(await issuer.mint({ sub: 'dave' }))), ['100101']);
      await t.app.services.accounts.update(id, { status: 'deleted' });
      assert.deepEqual(errorCodes(await asToken(await issuer.mint({ sub: 'dave' }))), ['110206']);
    });

    it('an API key takes precedence over a valid ID token of another account', async () => {
      const { account, apiKey } = await seedAccount(t.app);
      const res = await asToken(await issuer.mint({ sub: 'erin' }), apiKey);
      assert.equal(res.body.data?.getUserByPrivateId?.id, account.id);
    });

    it('an invalid API key is not rescued by a valid ID token: 401', async () => {
      const res = await graphql(t.url, {
        query: me,
        headers: {
          authorization: 'Bearer svc_invalid',
          'x-idp-token': await issuer.mint({ sub: 'frank' }),
        },
      });
      assert.equal(res.status, 401);
      assert.deepEqual(errorCodes(res), ['100101']);
    });

    it('an ID token is not an API key: sent as Authorization Bearer, it is an invalid key (401)', async () => {
      const res = await graphql(t.url, {
        query: me,
        headers: { authorization: `Bearer ${await issuer.mint()}` },
      });
      assert.equal(res.status, 401);
    });
  },
);
