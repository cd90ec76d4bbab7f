import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { decodeJwt } from 'jose';
import { BuiltinIdentityProvider } from '../../../src/auth/builtin-idp.ts';
import { systemClock } from '../../../src/shared/clock.ts';
import { newId } from '../../../src/shared/ids.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { linkIdentity } from '../../../src/store/identity.store.ts';
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

  /** The provider as a process whose PUBLIC_URL is `publicUrl` opens it. */
  const open = (publicUrl: string) =>
    BuiltinIdentityProvider.open({
      db: database.db,
      clock: systemClock,
      proposedIssuer: `${publicUrl}/idp`,
      audience: 'atelier',
      publicUrl,
    });
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
      ['http://a.example.test', 'http://b.example.test', 'http://c.example.test'].map(open),
    );
    const issuers = new Set(opened.map((idp) => idp.issuer));
    assert.equal(issuers.size, 1, [...issuers].join(', '));
  });

  it('a data store from before the record keeps the issuer its users’ identities carry', async () => {
    // As before the upgrade: two users linked under the server's issuer, and one of them also
    // under the issuer a command line without PUBLIC_URL used (the bug of issue 18).
    const old = await open('https://atelier.example.test');
    const ada = await newUser(old, 'ada@example.test');
    await newUser(old, 'grace@example.test');
    await linkIdentity(database.db, {
      issuer: 'http://localhost:8080/idp',
      subject: ada.id,
      accountId: ada.accountId,
      email: ada.email,
    });
    await database.db.deleteFrom('idp_issuer').execute();

    const upgraded = await open('http://localhost:8080');
    assert.equal(upgraded.issuer, 'https://atelier.example.test/idp');
  });
});
