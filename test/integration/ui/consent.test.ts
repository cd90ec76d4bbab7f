import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { documentHost } from '../../helpers/metadata-documents.ts';
import { freePort } from '../../helpers/net.ts';
import { authorizeUrl, exchangeWithOauth4webapi, newPkce } from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

/** An MCP client's loopback callback: records where the browser lands. */
async function callbackServer() {
  const port = await freePort();
  const hits: URL[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url!, `http://localhost:${port}`);
    // Browsers also ask for /favicon.ico; only the callback counts.
    if (url.pathname === '/oauth/callback') hits.push(url);
    response.end('You can close this window.');
  });
  await new Promise<void>((resolve) => server.listen(port, 'localhost', resolve));
  return {
    uri: `http://localhost:${port}/oauth/callback`,
    hits,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('an MCP client connecting, in Chromium: /login → /consent → callback', {
  skip: withoutBrowser,
}, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  let host: Awaited<ReturnType<typeof documentHost>>;
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    host = await documentHost();
    host.serveJson('/impostor.json', (self) => ({
      client_id: self,
      client_name: 'MCP Inspector and local tools',
      redirect_uris: ['http://localhost/oauth/callback'],
    }));
    t = await startTestApp(database, { cimdFetch: host.publicNetwork });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await host?.close();
    await database?.close();
  });

  /** A person with a sign-in, a callback server, and a page signed in and showing consent. */
  const openConsent = async (ctx: TestContext, email: string, clientId = 'atelier-local-tools') => {
    const { account } = await seedAccount(t.app);
    await t.app.services.identityProvider!.addUser({
      accountId: account.id,
      email,
      password: 'a browser password',
    });
    const callback = await callbackServer();
    ctx.after(() => callback.close());
    const page = await browser.newPage();
    ctx.after(() => page.close());
    const pkce = await newPkce();
    await page.goto(authorizeUrl(t.url, { clientId, redirectUri: callback.uri, pkce }));
    assert.equal(new URL(page.url()).pathname, '/login');
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', 'a browser password');
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=consent]:not([hidden])');
    return { account, callback, page, pkce };
  };

  it('signs in, shows the client, allows, and the client exchanges the code', async (ctx) => {
    const { account, callback, page, pkce } = await openConsent(ctx, 'agent-owner@example.test');
    assert.equal(new URL(page.url()).pathname, '/consent');
    assert.equal(await page.textContent('#client-name'), 'MCP Inspector and local tools');
    assert.match(
      (await page.textContent('#client-identity'))!,
      /operator · client ID atelier-local-tools/,
    );
    assert.match((await page.textContent('#redirect'))!, /goes back to localhost:\d+/);
    assert.match(
      (await page.textContent('[data-kind=loopback-redirect]'))!,
      /an app running on this computer/,
    );
    assert.equal(await page.$('[data-kind=impersonation]'), null);
    const csp = (await page.request.get(page.url())).headers()['content-security-policy'] ?? '';
    assert.match(csp, /frame-ancestors 'none'/);
    await page.click('#approve');

    await page.waitForURL((url) => url.href.startsWith(callback.uri));
    const landed = callback.hits.at(-1)!;
    assert.equal(landed.searchParams.get('state'), pkce.state);
    assert.equal(landed.searchParams.get('iss'), t.url);
    const tokens = await exchangeWithOauth4webapi(
      t.url,
      'atelier-local-tools',
      callback.uri,
      landed,
      pkce,
    );
    const principal = await t.app.oauth.tokens.verify(tokens.access_token);
    assert.equal(principal.accountId, account.id);
  });

  it('a spending limit set at consent holds for the connection (issue 21)', async (ctx) => {
    const { account, callback, page } = await openConsent(ctx, 'thrifty@example.test');
    assert.deepEqual(await page.locator('#spend-category option').allTextContents(), ['standard']);
    await page.getByLabel('At most this many credits').fill('25');
    await page.getByLabel('per').selectOption('month');
    await page.click('#approve');
    await page.waitForURL((url) => url.href.startsWith(callback.uri));
    assert.ok(callback.hits.at(-1)!.searchParams.get('code'));
    const actor = {
      accountId: account.id,
      role: 'user',
      credential: { kind: 'api_key', apiKeyId: 'x' },
    } as const;
    const [connection] = await t.app.services.mcpConnections.list(actor);
    assert.deepEqual(
      connection!.limits!.credits.map((l) => [l.category, l.period, l.credits, l.remaining]),
      [['standard', 'month', 25, 25]],
    );
  });

  it('a spending limit that is not a whole number is refused, and nothing is allowed', async (ctx) => {
    const { account, callback, page } = await openConsent(ctx, 'typo@example.test');
    // The browser's own check would stop a person; a forged form reaches the server.
    await page.locator('#spend-credits').evaluate((input) => {
      (input as HTMLInputElement).type = 'text';
      (input as HTMLInputElement).value = '2.5';
    });
    await page.click('#approve');
    await page.waitForLoadState();
    assert.match((await page.textContent('body'))!, /spending limit credits must be 1 to/);
    assert.equal(callback.hits.length, 0);
    const actor = {
      accountId: account.id,
      role: 'user',
      credential: { kind: 'api_key', apiKeyId: 'x' },
    } as const;
    assert.deepEqual(await t.app.services.mcpConnections.list(actor), []);
  });

  it('Deny sends access_denied back to the client', async (ctx) => {
    const { callback, page } = await openConsent(ctx, 'denier@example.test');
    await page.click('#deny');
    await page.waitForURL((url) => url.href.startsWith(callback.uri));
    assert.equal(callback.hits.at(-1)!.searchParams.get('error'), 'access_denied');
  });

  it('a metadata-document client with a trusted name is shown with its host and a warning', async (ctx) => {
    const { page } = await openConsent(ctx, 'careful@example.test', `${host.base}/impostor.json`);
    assert.equal(await page.textContent('#client-name'), 'MCP Inspector and local tools');
    const identity = (await page.textContent('#client-identity'))!;
    assert.match(identity, new RegExp(`Published at ${new URL(host.base).host}`));
    assert.match(identity, /not verified by Atelier/);
    const warning = page.locator('[data-kind=impersonation]');
    assert.equal(await warning.getAttribute('role'), 'alert');
    assert.match((await warning.textContent())!, /also the name of an app this server trusts/);
  });
});
