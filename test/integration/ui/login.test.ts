import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { graphql } from '../../helpers/graphql.ts';
import { freePort } from '../../helpers/net.ts';
import { TestIssuer } from '../../helpers/oidc-issuer.ts';
import { seedAccount } from '../../helpers/seed.ts';

const storedToken = (page: Page) => page.evaluate(() => sessionStorage.getItem('atelier.idToken'));

async function accountOf(url: string, idToken: string): Promise<string | undefined> {
  const res = await graphql<{ getUserByPrivateId: { id: string } }>(url, {
    query: '{ getUserByPrivateId { id } }',
    headers: { 'x-idp-token': idToken },
  });
  return res.body.data?.getUserByPrivateId.id;
}

describe('/login in Chromium', { skip: withoutBrowser }, () => {
  let browser: Browser;
  let database: Database;
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
  });
  after(async () => {
    await browser?.close();
    await database?.close();
  });

  it('signs in with the built-in provider and ends holding a valid ID token', async (t) => {
    const app = await startTestApp(database);
    t.after(() => app.close());
    const { account } = await seedAccount(app.app);
    await app.app.services.identityProvider!.addUser({
      accountId: account.id,
      email: 'ui@example.test',
      password: 'a browser password',
    });
    const page = await browser.newPage();
    t.after(() => page.close());

    const response = await page.goto(`${app.url}/login`);
    assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    await page.fill('input[name=email]', 'ui@example.test');
    await page.fill('input[name=password]', 'wrong password!');
    await page.click('button[type=submit]');
    await page.waitForSelector('#message:not([hidden])');
    assert.equal(await page.textContent('#message'), 'Wrong email or password.');
    assert.equal(await storedToken(page), null);

    await page.fill('input[name=password]', 'a browser password');
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in]:not([hidden])');
    assert.equal(await page.textContent('#who'), 'ui@example.test');
    const idToken = await storedToken(page);
    assert.ok(idToken);
    assert.equal(await accountOf(app.url, idToken), account.id);

    await page.reload();
    await page.waitForSelector('[data-testid=signed-in]:not([hidden])');
    await page.click('#sign-out');
    assert.equal(await storedToken(page), null);
  });

  it('signs in with an external OpenID provider (code + PKCE, public client) and ends holding its ID token', async (t) => {
    const port = await freePort();
    const issuer = await TestIssuer.start({ redirectUris: [`http://127.0.0.1:${port}/login`] });
    t.after(() => issuer.stop());
    const app = await startTestApp(database, {
      port,
      env: { IDP_ISSUER: issuer.url, IDP_AUDIENCE: issuer.clientId, IDP_CREATE_ACCOUNTS: 'true' },
    });
    t.after(() => app.close());
    const page = await browser.newPage();
    t.after(() => page.close());

    await page.goto(`${app.url}/login`);
    await page.click('#oidc-sign-in');
    // The issuer's own pages: sign in, then consent.
    await page.waitForURL(`${issuer.url}/**`);
    await page.fill('input[name=login]', 'zoe');
    await page.fill('input[name=password]', 'anything');
    await page.click('button[type=submit]');
    await page.click('button[type=submit]');
    await page.waitForURL(`${app.url}/login`);
    await page.waitForSelector('[data-testid=signed-in]:not([hidden])');
    assert.equal(await page.textContent('#who'), 'zoe@example.test');
    assert.equal(new URL(page.url()).search, '', 'the code left the address bar');

    const idToken = await storedToken(page);
    assert.ok(idToken);
    const accountId = await accountOf(app.url, idToken);
    assert.match(accountId ?? '', /^acc_/);
    const identity = await database.db
      .selectFrom('identities')
      .selectAll()
      .where('subject', '=', 'zoe')
      .executeTakeFirstOrThrow();
    assert.deepEqual([identity.issuer, identity.account_id], [issuer.url, accountId]);
  });
});
