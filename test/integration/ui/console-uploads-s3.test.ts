import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible, openConsole } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { gqlOk, testPicture } from '../../helpers/media.ts';
import { freePort } from '../../helpers/net.ts';
import { startS3, type TestS3 } from '../../helpers/s3.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 33: with media on object storage, createUpload hands the console a presigned PUT on the
// bucket's origin. Chromium uploads a portrait straight to a local S3-protocol server (s3rver,
// with the CORS rule an operator sets on the bucket) under the Content-Security-Policy the
// console is served with, and shows the portrait back from a presigned GET; bytes that are no
// image reach the bucket (it checks nothing) and are refused at their first use, next to the
// field, making no avatar.

describe('console uploads straight to object storage (issue 33)', { skip: withoutBrowser }, () => {
  let browser: Browser;
  let database: Database;
  let s3: TestS3;
  let t: TestApp;
  const pageErrors: string[] = [];
  const blocked: string[] = [];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    const port = await freePort();
    s3 = await startS3('console-media', { corsOrigins: [`http://127.0.0.1:${port}`] });
    t = await startTestApp(database, { port, env: { ...s3.env } });
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), []);
    assert.deepEqual(blocked.splice(0), [], 'nothing blocked by the page’s policy');
  });
  after(async () => {
    await t?.close();
    await s3?.close();
    await browser?.close();
    await database?.close();
  });

  it('PUTs a portrait to the bucket under the served policy, and refuses lying bytes at first use', async (test) => {
    const seeded = await seedAccount(t.app);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const toBucket: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${s3.endpoint}/`)) toBucket.push(request.method());
    });
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    const response = await page.request.get(`${t.url}/`);
    const csp = response.headers()['content-security-policy'] ?? '';
    assert.match(csp, new RegExp(`connect-src 'self' ${s3.endpoint}(;|$)`));
    assert.match(csp, new RegExp(`img-src 'self' data: https: ${s3.endpoint}(;|$)`));

    // Bytes that are no image: the bucket takes them, createAvatar refuses them.
    await page.fill('#avatar-form input[name=name]', 'Lies');
    await page.setInputFiles('#avatar-form input[name=portraitMediaId]', {
      name: 'fake.png',
      mimeType: 'image/png',
      buffer: Buffer.alloc(2_000, 7),
    });
    await page.click('#avatar-form button[type=submit]');
    await page.waitForSelector('#avatar-form-portraitMediaId-error');
    assert.match(
      (await page.textContent('#avatar-form-portraitMediaId-error')) ?? '',
      // Read back from the bucket and checked: what only bytes that arrived can be told.
      /was refused: the bytes are of no recognised type/,
    );
    const none = await gqlOk<{ listAvatars: { nodes: unknown[] } }>(
      t.url,
      seeded.apiKey,
      '{ listAvatars { nodes { avatarId } } }',
    );
    assert.deepEqual(none.listAvatars.nodes, []);
    await assertAccessible(page);

    // A real portrait: straight to the bucket, verified at createAvatar, shown from the bucket.
    await page.fill('#avatar-form input[name=name]', 'Straight');
    await page.setInputFiles('#avatar-form input[name=portraitMediaId]', {
      name: 'me.png',
      mimeType: 'image/png',
      buffer: await testPicture(200, 200),
    });
    await page.click('#avatar-form button[type=submit]');
    await page.waitForSelector('#avatar-list h4:has-text("Straight")');
    assert.equal(await page.locator('#avatar-form .field-error').count(), 0, 'no stale error');
    const portrait = '#avatar-list img.thumb';
    await page.waitForFunction(
      (selector) => (document.querySelector(selector) as HTMLImageElement | null)?.naturalWidth,
      portrait,
    );
    // The bytes went from the browser to the bucket (the PUT, cross-origin under the bucket's
    // CORS rule), and the portrait came back from it (Atelier's signed URL redirects there).
    assert.deepEqual([...new Set(toBucket)].sort(), ['GET', 'PUT']);
  });
});
