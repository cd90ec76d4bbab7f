import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { decodeJwt } from 'jose';
import { BuiltinIdentityProvider } from '../../../src/auth/builtin-idp.ts';
import { systemClock } from '../../../src/shared/clock.ts';
import { newId } from '../../../src/shared/ids.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { findIdentityAccount, linkIdentity } from '../../../src/store/identity.store.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase, resetDatabase } from '../../helpers/database.ts';

const password = 'correct horse battery';

describeEachBackend('the built-in identity provider’s recorded issuer', (backend) => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase(backend);
  });
  after(() => database.close());
  beforeEach(() => resetDatabase(database));

  /** The provider as a server (or, `records: false`, a worker or command) with this PUBLIC_URL opens it. */
  const open = (publicUrl: string, records = true) =>
    BuiltinIdentityProvider.open({
      db: database.db,
      clock: systemClock,
      proposedIssuer: `${publicUrl}/idp`,
      audience: 'atelier',
      publicUrl,
      records,
    });
  /** The account a token of `issuer` for `user` signs in to, if any. */
  const accountUnder = async (issuer: string, user: { id: string }) =>
    findIdentityAccount(database.db, issuer, user.id);
  const newUser = async (idp: BuiltinIdentityProvider, email: string) => {
    const account = await insertAccount(database.db, {
      id: newId('acc'),
      alias: email.split('@')[0]!,
      role: 'user',
      apiKeyAccess: false,
    });
    return idp.addUser({ accountId: account.id, email, password });
  };

  it('the first start records its issuer; later starts keep it, whatever their PUBLIC_URL', async () => {
    const first = await open('https://atelier.example.test');
    assert.equal(first.issuer, 'https://atelier.example.test/idp');
    const user = await newUser(first, 'ada@example.test');
    const later = await open('http://localhost:8080');
    assert.equal(later.issuer, 'https://atelier.example.test/idp');
    const { idToken } = await later.signIn('ada@example.test', password);
    const claims = decodeJwt(idToken);
    assert.deepEqual([claims.iss, claims.sub], ['https://atelier.example.test/idp', user.id]);
  });

  it('processes starting together on a new data store agree on one issuer', async () => {
    const opened = await Promise.all(
      ['http://a.example.test', 'http://b.example.test', 'http://c.example.test'].map((url) =>
        open(url),
      ),
    );
    const issuers = new Set(opened.map((idp) => idp.issuer));
    assert.equal(issuers.size, 1, [...issuers].join(', '));
  });

  it('a data store from before the record takes the server’s issuer and links every user under it', async () => {
    // As before the upgrade: the server signed with its own issuer; three users were linked
    // under the one a command line without PUBLIC_URL used (the bug of issue 18), more than
    // under the server's. The server's issuer is the one sign-ins used, whatever the count.
    const server = 'https://atelier.example.test';
    const old = await open(server);
    const admin = await newUser(old, 'admin@example.test');
    const shell = await open('http://localhost:8080', false);
    await database.db.deleteFrom('idp_issuer').execute();
    const added = [];
    for (const name of ['ada', 'grace', 'edsger']) {
      const user = await newUser(shell, `${name}@example.test`);
      await database.db.deleteFrom('identities').where('subject', '=', user.id).execute();
      await linkIdentity(database.db, {
        issuer: 'http://localhost:8080/idp',
        subject: user.id,
        accountId: user.accountId,
        email: user.email,
      });
      added.push(user);
    }

    const upgraded = await open(server);
    assert.equal(upgraded.issuer, `${server}/idp`);
    for (const user of [admin, ...added])
      assert.equal(await accountUnder(`${server}/idp`, user), user.accountId, user.email);
  });

  it('a command line never records; the first server links what it added', async () => {
    const shell = await open('http://localhost:8080', false);
    assert.equal(shell.issuer, 'http://localhost:8080/idp', 'no record yet: its own');
    const ada = await newUser(shell, 'ada@example.test');
    assert.equal(
      await database.db.selectFrom('idp_issuer').selectAll().executeTakeFirst(),
      undefined,
    );

    const server = await open('https://atelier.example.test');
    assert.equal(server.issuer, 'https://atelier.example.test/idp');
    assert.equal(await accountUnder(server.issuer, ada), ada.accountId);
    const { idToken } = await server.signIn('ada@example.test', password);
    assert.equal(decodeJwt(idToken).iss, server.issuer);
    // From now on a command line reads the record, whatever its PUBLIC_URL.
    assert.equal((await open('http://localhost:8080', false)).issuer, server.issuer);
  });

  it('a link that exists is never moved', async () => {
    const shell = await open('http://localhost:8080', false);
    const ada = await newUser(shell, 'ada@example.test');
    const other = await insertAccount(database.db, {
      id: newId('acc'),
      alias: 'other',
      role: 'user',
      apiKeyAccess: false,
    });
    await linkIdentity(database.db, {
      issuer: 'https://atelier.example.test/idp',
      subject: ada.id,
      accountId: other.id,
      email: ada.email,
    });
    await open('https://atelier.example.test');
    assert.equal(await accountUnder('https://atelier.example.test/idp', ada), other.id);
  });
});
