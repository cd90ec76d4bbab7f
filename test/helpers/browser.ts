import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); playwright never downloads a browser here. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Browser tests need Chromium. On a machine without it they are skipped with the reason; CI
 * installs it and sets REQUIRE_BROWSER=1, so there a missing browser fails instead.
 */
export const withoutBrowser: string | false =
  existsSync(chromiumPath) || process.env.REQUIRE_BROWSER === '1'
    ? false
    : `Chromium not found at ${chromiumPath}: apt-get install -y chromium (or set CHROMIUM_PATH)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    // This machine's network is closed: without these, Chromium keeps calling Google's hosts.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Chromium plays the person at the authorization URL an MCP client printed: signs in with the
 * built-in identity provider, allows on the consent page, and waits until the browser reaches
 * the client's callback. Returns the client name the consent page showed.
 */
export async function signInAndAllow(
  browser: Browser,
  authorizeUrl: string,
  who: { email: string; password: string },
): Promise<string | null> {
  const callback = new URL(new URL(authorizeUrl).searchParams.get('redirect_uri') ?? '');
  const page = await browser.newPage();
  try {
    await page.goto(authorizeUrl);
    await page.fill('input[name=email]', who.email);
    await page.fill('input[name=password]', who.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=consent]:not([hidden])');
    const clientName = await page.textContent('#client-name');
    await page.click('#approve');
    await page.waitForURL((url) => url.origin === callback.origin);
    return clientName;
  } finally {
    await page.close();
  }
}
