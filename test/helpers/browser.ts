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
