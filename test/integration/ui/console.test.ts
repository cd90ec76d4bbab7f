import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { mcpAccessToken, postMcp } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

// The web console at `/` (issue 20), driven in Chromium as a person would: the landing page for
// anyone, then, signed in with the built-in provider, the account's credits, keys, generations
// and MCP connections. Screenshots of each page go to SCREENSHOT_DIR (default
// .tmp/screenshots; docs/console.md's come from a run with SCREENSHOT_DIR=docs/screenshots).

const screenshots = process.env.SCREENSHOT_DIR ?? path.join('.tmp', 'screenshots');

async function snap(page: Page, name: string): Promise<void> {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
}

const balanceOf = async (t: TestApp, apiKey: string) => {
  const res = await graphql<{
    getUserByPrivateId: { creditBalances: { category: string; amount: number }[] };
  }>(t.url, { query: '{ getUserByPrivateId { creditBalances { category amount } } }', apiKey });
  return res.body.data?.getUserByPrivateId.creditBalances;
};

/** Signs in at /login?next=console and waits for the console to have loaded every panel. */
async function signIn(page: Page, t: TestApp, who: { email: string; password: string }) {
  await page.goto(`${t.url}/login?next=console`);
  await page.fill('input[name=email]', who.email);
  await page.fill('input[name=password]', who.password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${t.url}/`);
  await page.waitForSelector('[data-testid=console][data-ready=true]');
}

/** How many voices the account can choose from, over every page of listVoiceModels. */
async function voiceCount(t: TestApp, apiKey: string): Promise<number> {
  let count = 0;
  let after: string | null = null;
  for (;;) {
    const res: Awaited<
      ReturnType<
        typeof graphql<{
          listVoiceModels: {
            nodes: unknown[];
            pageInfo: { hasNextPage: boolean; endCursor: string };
          };
        }>
      >
    > = await graphql(t.url, {
      query:
        'query ($after: String) { listVoiceModels(first: 100, after: $after) { nodes { voiceModelId } pageInfo { hasNextPage endCursor } } }',
      variables: { after },
      apiKey,
    });
    const page = res.body.data!.listVoiceModels;
    count += page.nodes.length;
    if (!page.pageInfo.hasNextPage) return count;
    after = page.pageInfo.endCursor;
  }
}

/** Submits the generate form and waits for the task's live updates to say it finished. */
async function generate(page: Page): Promise<string | null> {
  await page.waitForFunction(() =>
    /^Costs \d+ credits?/.test(document.getElementById('estimate')?.textContent ?? ''),
  );
  await page.click('#generate-form button[type=submit]');
  await page.waitForSelector('#task-status[data-finish-code]');
  return page.getAttribute('#task-status', 'data-finish-code');
}

describe('the web console at / in Chromium', { skip: withoutBrowser }, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database);
  });
  /** A page in a context of its own (its own cookies), closed after the test. */
  const newPage = async (
    test: { after(fn: () => Promise<void>): void },
    options?: BrowserContextOptions,
  ): Promise<Page> => {
    const context = await browser.newContext(options);
    test.after(() => context.close());
    return context.newPage();
  };
  after(async () => {
    await t?.close();
    await browser?.close();
    await database?.close();
  });

  it('shows anonymous visitors what this deployment offers and how to connect', async (test) => {
    const page = await newPage(test);
    const response = await page.goto(`${t.url}/`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self'(;|$)/, 'no inline script allowed');
    assert.match(csp, /media-src 'self' https:/);
    await page.waitForSelector('[data-testid=landing]');
    const landing = await page.textContent('[data-testid=landing]');
    assert.match(landing ?? '', /Atelier Sketch/, 'a built-in model is listed');
    assert.match(landing ?? '', new RegExp(`${t.url}/mcp`), 'the MCP endpoint is given');
    assert.match(landing ?? '', /graphql-transport-ws/);
    // The header the server takes (issue 30 §6: it said X-API-Key, which is refused).
    assert.match(landing ?? '', /Authorization: Bearer svc_…/);
    assert.doesNotMatch(landing ?? '', /X-API-Key/);
    const icon = await fetch(`${t.url}/favicon.ico`);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get('content-type'), 'image/x-icon');
    assert.deepEqual([...Buffer.from(await icon.arrayBuffer()).subarray(0, 4)], [0, 0, 1, 0]);
    for (const name of ['constructor', '__proto__', 'toString']) {
      assert.equal((await fetch(`${t.url}/assets/${name}`)).status, 404, name);
    }
    assert.equal(await page.isHidden('[data-testid=console]'), true);
    assert.equal(await page.getAttribute('#sign-in', 'href'), '/login?next=console');
    await assertAccessible(page);
    await snap(page, 'landing');
  });

  it('lets a signed-in person manage keys, generate and play media, and revoke an agent', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    // An MCP connection made the way an agent makes one; its sign-in is the person's.
    const mcpToken = await mcpAccessToken(t, seeded.account.id);
    const who = { email: `mcp-${seeded.account.id}@example.test`, password: 'an mcp password' };
    const limited = await graphql(t.url, {
      query: `mutation ($id: ID!, $l: SpendingLimitsInput) {
        setApiKeyLimits(apiKeyId: $id, limits: $l) { id }
      }`,
      variables: {
        id: seeded.apiKeyId,
        l: { credits: [{ category: 'standard', period: 'day', credits: 50 }] },
      },
      apiKey: seeded.apiKey,
    });
    assert.deepEqual(errorCodes(limited), []);
    const page = await newPage(test, { viewport: { width: 1100, height: 900 } });
    await signIn(page, t, who);
    assert.match((await page.textContent('#balances')) ?? '', /100 standard/);
    await page.waitForSelector('#key-list li:has-text("spent 0 of 50 standard this day")');
    assert.equal(await page.isHidden('[data-testid=landing]'), true);
    await assertAccessible(page);
    await snap(page, 'console');

    // A long page: every section is listed at its top, and each entry takes you there.
    const listed = await page.$$eval('#section-nav a', (links) =>
      links.map((a) => [a.textContent, a.getAttribute('href')]),
    );
    const sections = await page.$$eval('#home section > h2', (titles) =>
      titles.map((h2) => [h2.textContent, `#${h2.parentElement!.id}`]),
    );
    assert.deepEqual(listed, sections);
    await page.click('#section-nav a[href="#webhooks"]');
    await page.waitForFunction(() => {
      const top = document.getElementById('webhooks')!.getBoundingClientRect().top;
      return window.location.hash === '#webhooks' && top >= 0 && top < window.innerHeight;
    });
    await page.evaluate(() => window.scrollTo(0, 0));

    // A key: created with its secret shown once, working, then revoked and refused.
    await page.fill('#key-form input[name=name]', 'browser key');
    await page.click('#key-form button[type=submit]');
    const secret = (await page.textContent('#key-secret')) ?? '';
    const me = await graphql<{ getUserByPrivateId: { id: string } }>(t.url, {
      query: '{ getUserByPrivateId { id } }',
      apiKey: secret,
    });
    assert.equal(me.body.data?.getUserByPrivateId.id, seeded.account.id);
    await page.click('button[aria-label="Revoke browser key"]');
    await page.waitForSelector('#key-list li:has-text("browser key") .tag:has-text("revoked")');
    const refused = await graphql(t.url, {
      query: '{ getUserByPrivateId { id } }',
      apiKey: secret,
    });
    assert.deepEqual(errorCodes(refused), ['100101']);
    // The account's own activity says so, read again on request.
    await page.click('#activity button:has-text("Read it again")');
    await page.waitForSelector('#activity-entries tr:has-text("api_key.revoked")');
    assert.equal(
      await page.locator('#activity-entries th:has-text("Account")').count(),
      0,
      'no account column: it is all the person’s own',
    );

    // An image: estimated, submitted, followed live, shown and charged once.
    await page.fill('#generate-form textarea[name=prompt]', 'a lighthouse at dawn');
    assert.equal(await generate(page), '0');
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#result img');
      return img?.complete === true && img.naturalWidth > 0;
    });
    const afterImage = await balanceOf(t, seeded.apiKey);
    assert.ok(afterImage?.[0] && afterImage[0].amount < 100, 'the image was charged');
    await page.waitForFunction(
      (expected) => document.getElementById('balances')?.textContent?.includes(expected),
      `${afterImage[0].amount} standard`,
    );
    await snap(page, 'generate-image');

    // Speech: another kind's form, then the audio plays in the page.
    await page.selectOption('#kind', 'speech');
    await page.waitForSelector('#generate-form textarea[name=text]');
    await page.fill('#generate-form textarea[name=text]', 'Hello from the Atelier console.');
    assert.equal(await generate(page), '0');
    const played = await page.evaluate(async () => {
      const audio = document.querySelector<HTMLAudioElement>('#result audio');
      if (audio === null) return 'no audio element';
      await audio.play();
      await new Promise((resolve) => audio.addEventListener('timeupdate', resolve, { once: true }));
      return audio.currentTime > 0 && audio.duration > 0 ? 'played' : 'did not advance';
    });
    assert.equal(played, 'played');
    await page.waitForFunction(
      () => document.querySelectorAll('#history article.content').length >= 2,
    );

    // The agent's connection: listed, revoked, and its token refused on the next request.
    await page.waitForSelector('#connection-list li[data-client-id]');
    await page.click('#connection-list button[aria-label^="Revoke"]');
    await page.waitForSelector('#connection-list li[data-client-id]', { state: 'detached' });
    assert.match((await page.textContent('#mcp [role=status]')) ?? '', /can no longer act for you/);
    const mcp = await postMcp(t.url, { authorization: `Bearer ${mcpToken}` });
    assert.equal(mcp.status, 401);
    await assertAccessible(page);
    await snap(page, 'console-after');
  });

  it('a newcomer’s form: a hint, not an error; a refusal that ends; every voice; the prompts', async (test) => {
    // Issue 30 §6, as a newcomer met it: a red "prompt: must not be empty" on an empty form,
    // "Submitting…" forever after a refusal, the old error beside a new price, 100 of ~280
    // voices with Afrikaans first, and gallery cards without their prompt.
    const seeded = await seedAccount(t.app, { credits: {} });
    await mcpAccessToken(t, seeded.account.id);
    const page = await newPage(test, { locale: 'de-DE', viewport: { width: 1100, height: 900 } });
    await signIn(page, t, {
      email: `mcp-${seeded.account.id}@example.test`,
      password: 'an mcp password',
    });
    await page.waitForFunction(
      () =>
        document.getElementById('estimate')?.textContent === 'Write the prompt to see the price.',
    );
    assert.equal(await page.getAttribute('#estimate', 'class'), 'detail');
    assert.equal(
      await page.isHidden('#generate-message'),
      true,
      'no error before anything is typed',
    );

    await page.fill('#generate-form textarea[name=prompt]', 'a kite');
    await page.waitForFunction(() =>
      /more than you have/.test(document.getElementById('estimate')?.textContent ?? ''),
    );
    await page.click('#generate-form button[type=submit]');
    await page.waitForSelector('#generate-message:not([hidden])');
    assert.match((await page.textContent('#generate-message')) ?? '', /credit/i);
    assert.equal(await page.textContent('#task-status'), 'Not submitted.');
    assert.equal(await page.isEnabled('#generate-form button[type=submit]'), true);
    // A changed form is a new request: the refusal goes with the old one.
    await page.fill('#generate-form textarea[name=prompt]', 'a red kite');
    await page.waitForSelector('#generate-message', { state: 'hidden' });

    // Another model's fields keep what was written for the last one (they are drawn anew).
    await page.$eval('#generate-form textarea[name=prompt]', (e) => {
      (e as HTMLElement).dataset.drawn = 'before';
    });
    const current = await page.inputValue('#model');
    const models = await page.$$eval('#model option', (os) =>
      os.map((o) => (o as HTMLOptionElement).value),
    );
    await page.selectOption('#model', models.find((m) => m !== current) ?? current);
    await page.waitForSelector('#generate-form textarea[name=prompt]:not([data-drawn])');
    assert.equal(await page.inputValue('#generate-form textarea[name=prompt]'), 'a red kite');

    // Speech: every voice, the browser's language (German) chosen, and a search that narrows.
    const total = await voiceCount(t, seeded.apiKey);
    assert.ok(total > 100, `${total} voices`);
    await page.selectOption('#kind', 'speech');
    await page.waitForSelector('#generate-form select[name=voiceModelId]');
    assert.equal(
      await page.locator('#generate-form select[name=voiceModelId] option').count(),
      total,
    );
    const chosen = await page.$eval(
      '#generate-form select[name=voiceModelId]',
      (s) => (s as HTMLSelectElement).selectedOptions[0]?.textContent ?? '',
    );
    assert.match(chosen, /\(de(-[a-z]+)?\)$/, chosen);
    await page.fill('#voice-search', 'portu');
    const found = await page.$$eval('#generate-form select[name=voiceModelId] option', (options) =>
      options.map((o) => o.textContent ?? ''),
    );
    assert.ok(found.length > 0 && found.length < total, `${found.length} found`);
    for (const text of found) assert.match(text, /portu/i);

    // A refusal about one field is said next to it, once, and goes when that is changed.
    const speed = '#generate-form input[name=speed]';
    await page.fill('#generate-form textarea[name=text]', 'Olá.');
    await page.fill(speed, '9');
    await page.click('#generate-form button[type=submit]');
    await page.waitForSelector('#generate-form-speed-error');
    assert.match((await page.textContent('#generate-form-speed-error')) ?? '', /\d/);
    assert.equal(await page.getAttribute(speed, 'aria-invalid'), 'true');
    assert.equal(await page.isHidden('#generate-message'), true, 'not said twice');
    assert.equal(await page.textContent('#task-status'), 'Not submitted.');
    await assertAccessible(page);
    await page.fill(speed, '1');
    await page.waitForSelector('#generate-form-speed-error', { state: 'detached' });
    assert.equal(await page.getAttribute(speed, 'aria-invalid'), null);

    // The gallery shows what each generation was asked with.
    await t.app.services.accounts.grant({
      accountId: seeded.account.id,
      category: 'standard',
      amount: 10,
    });
    await page.selectOption('#kind', 'image');
    await page.waitForSelector('#generate-form textarea[name=prompt]');
    await page.fill('#generate-form textarea[name=prompt]', 'a lighthouse in the fog');
    assert.equal(await generate(page), '0');
    await page.waitForSelector('#history article.content blockquote.prompt');
    assert.equal(
      await page.textContent('#history article.content blockquote.prompt'),
      'a lighthouse in the fog',
    );
    await assertAccessible(page);
  });

  it('is usable on a phone-sized screen', async (test) => {
    const seeded = await seedAccount(t.app);
    await mcpAccessToken(t, seeded.account.id);
    const page = await newPage(test, { viewport: { width: 390, height: 844 }, isMobile: true });
    await signIn(page, t, {
      email: `mcp-${seeded.account.id}@example.test`,
      password: 'an mcp password',
    });
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.equal(overflow, 0, 'nothing wider than the screen');
    await assertAccessible(page);
    await snap(page, 'console-phone');
  });

  it('sends a person whose ID token is refused back to /login', async (test) => {
    const page = await newPage(test);
    await page.goto(`${t.url}/`);
    // Well-formed and unexpired, but signed by nobody this server trusts.
    const header = Buffer.from('{"alg":"RS256","typ":"JWT"}').toString('base64url');
    const claims = Buffer.from(
      JSON.stringify({ sub: 'someone', exp: Math.floor(Date.now() / 1000) + 600 }),
    ).toString('base64url');
    await page.evaluate(
      (token) => sessionStorage.setItem('atelier.idToken', token),
      `${header}.${claims}.c2lnbmF0dXJl`,
    );
    await page.reload();
    await page.waitForURL(`${t.url}/login?next=console`);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('atelier.idToken')), null);
  });
});
