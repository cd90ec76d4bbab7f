import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import type { TestApp } from './app.ts';

/**
 * axe-core's WCAG 2 A and AA rules on the page as it is now: every violation, named. Run in
 * legacy mode, axe checks the page in the page itself; the default mode opens a blank page
 * beside it and injects axe there too, to merge the results of frames, and our pages have none
 * (their CSP allows no frame: `default-src 'none'`, no `frame-src`). Same violations found on
 * the console with and without known faults injected, about 1 s less per check.
 */
export async function assertAccessible(page: Page): Promise<void> {
  const { violations } = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .setLegacyMode()
    .analyze();
  assert.deepEqual(
    violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
  );
}

/**
 * The console of `accountId` in a fresh browser context (closed after the test), signed in at
 * /login with a built-in sign-in added for the account on first use; `pageErrors` collects
 * what the page threw.
 */
export async function openConsole(
  browser: Browser,
  t: TestApp,
  accountId: string,
  test: { after(fn: () => Promise<void>): void },
  pageErrors: string[],
  options: BrowserContextOptions = { viewport: { width: 1100, height: 900 } },
  /** Runs on the page before it signs in (a route the console's sockets must go through). */
  prepare: (page: Page) => Promise<void> = async () => {},
): Promise<Page> {
  const who = { email: `console-${accountId}@example.test`, password: 'a console password' };
  if (!signIns.has(accountId)) {
    await t.app.services.identityProvider!.addUser({ accountId, ...who });
    signIns.add(accountId);
  }
  const context = await browser.newContext(options);
  test.after(() => context.close());
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await prepare(page);
  await page.goto(`${t.url}/login?next=console`);
  await page.fill('input[name=email]', who.email);
  await page.fill('input[name=password]', who.password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${t.url}/`);
  await page.waitForSelector('[data-testid=console][data-ready=true]');
  return page;
}
const signIns = new Set<string>();

/** The selector of an element by its id, whatever characters the id holds. */
export const byId = (id: string) => `[id="${id.replace(/"/g, '\\"')}"]`;
