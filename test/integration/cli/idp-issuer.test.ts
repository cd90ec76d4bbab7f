import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, it } from 'node:test';
import { decodeJwt } from 'jose';
import { describeEachBackend } from '../../helpers/backends.ts';
import { atelier, startServer } from '../../helpers/cli.ts';
import { migratedDataDir } from '../../helpers/data-dir.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { graphql } from '../../helpers/graphql.ts';

const password = 'a long enough password';
const addUser = (env: Record<string, string>, accountId: string, email: string) =>
  atelier(
    ['idp', 'user', 'add', '--account', accountId, '--email', email, '--password-stdin'],
    env,
    password,
  );

/** A data store for `bin/atelier` processes: a copied embedded database, or a new PostgreSQL one. */
async function dataStore(backend: 'pglite' | 'postgres'): Promise<Record<string, string>> {
  const dataDir = await migratedDataDir('atelier-idp-issuer-');
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  if (backend === 'pglite') return { DATA_DIR: dataDir };
  const database = await createEmptyPostgresDatabase();
  after(() => database.drop());
  const env = { DATA_DIR: dataDir, DATABASE_URL: database.url };
  assert.equal((await atelier(['migrate'], env)).code, 0);
  return env;
}

// Issue 18: `idp user add` run without the server's PUBLIC_URL linked the user to the issuer
// `http://localhost:8080/idp` while the server verified tokens with its own; the person's
// sign-in then silently opened a new, empty account.
describeEachBackend('the built-in identity provider keeps one issuer per data store', (backend) => {
  it('a user added without the server’s PUBLIC_URL signs in to their account, also after the server moved', async () => {
    const store = await dataStore(backend);
    // The first start records the issuer, from this server's PUBLIC_URL.
    const first = await startServer(store);
    const issuer = `${first.url}/idp`;
    assert.equal(await first.stop(), 0, first.stderr());

    // Operator commands as typed in another shell: no PUBLIC_URL (the default is localhost:8080).
    const created = await atelier(['account', 'create', '--alias', 'ada'], store);
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout) as { id: string };
    const added = await addUser(store, account.id, 'ada@example.test');
    assert.equal(added.code, 0, added.stderr);

    // The server again, on another port, so with another PUBLIC_URL: it keeps working, says so once.
    const moved = await startServer(store);
    try {
      const signedIn = await fetch(`${moved.url}/idp/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.test', password }),
      });
      assert.equal(signedIn.status, 200);
      const { idToken } = (await signedIn.json()) as { idToken: string };
      const me = await graphql<{ getUserByPrivateId: { id: string; alias: string } }>(moved.url, {
        query: '{ getUserByPrivateId { id alias } }',
        headers: { 'x-idp-token': idToken },
      });
      assert.deepEqual(me.body.data?.getUserByPrivateId, { id: account.id, alias: 'ada' });
      assert.equal(decodeJwt(idToken).iss, issuer);
      const warnings = moved.stderr().match(/WARNING: the built-in identity provider keeps .*/g);
      assert.deepEqual(warnings, [
        `WARNING: the built-in identity provider keeps this data store's issuer ${issuer}, not ${moved.url}/idp (PUBLIC_URL/idp); sign-ins work as before. See docs/authentication.md, "The built-in identity provider's issuer".`,
      ]);

      // Discovery names the recorded issuer; its keys are where this server answers now.
      const discovery = (await (
        await fetch(`${moved.url}/idp/.well-known/openid-configuration`)
      ).json()) as { issuer: string; jwks_uri: string; sign_in_endpoint: string };
      assert.deepEqual(discovery.issuer, issuer);
      assert.equal(discovery.jwks_uri, `${moved.url}/idp/jwks`);
      assert.equal(discovery.sign_in_endpoint, `${moved.url}/idp/sign-in`);
      assert.equal((await fetch(discovery.jwks_uri)).status, 200);
      // The command said which issuer it linked the user under.
      assert.equal((JSON.parse(added.stdout) as { issuer: string }).issuer, issuer);
    } finally {
      await moved.stop();
    }
  });

  it('idp user add with IDP_ISSUER set refuses, naming both issuers, and writes nothing', async () => {
    const store = await dataStore(backend);
    const server = await startServer(store);
    const issuer = `${server.url}/idp`;
    assert.equal(await server.stop(), 0, server.stderr());
    const created = await atelier(['account', 'create', '--alias', 'grace'], store);
    const account = JSON.parse(created.stdout) as { id: string };

    // A shell that still has the settings of another deployment, one with an external provider.
    const external = 'https://accounts.example.test';
    const stray = { ...store, IDP_ISSUER: external, IDP_AUDIENCE: 'atelier-elsewhere' };
    const refused = await addUser(stray, account.id, 'grace@example.test');
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.equal(
      refused.stderr,
      'Invalid configuration:\n' +
        `  - IDP_ISSUER: ${external} is an external identity provider, so the built-in one is off here and people are added at ${external}. ` +
        `This data store's built-in provider has the issuer ${issuer}: if the server runs without IDP_ISSUER, run this command without IDP_ISSUER too.\n`,
    );

    // Nothing was written: the email is still free, under the recorded issuer.
    const added = await addUser(store, account.id, 'grace@example.test');
    assert.equal(added.code, 0, added.stderr);
    assert.equal((JSON.parse(added.stdout) as { issuer: string }).issuer, issuer);
  });
});
