import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible, openConsole } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { gqlOk, testPicture, testTone } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 33: avatars in the console, driven in Chromium. A portrait (PNG) is uploaded through
// Atelier's own upload route (local media storage; the S3 path is console-uploads-s3.test.ts),
// the avatar made from it is listed with its portrait, offered at once by the Generate form and
// used for an avatar video on the fake engine; refused files (a text file, one over
// UPLOAD_MAX_BYTES, bytes that are no image) are said next to the field and make no avatar;
// delete asks first; with the keyboard alone, and on a phone-sized screen.

const screenshots = process.env.SCREENSHOT_DIR ?? path.join('.tmp', 'screenshots');
const maxBytes = 200_000;

const models = JSON.stringify([
  {
    modelId: 'mdl_test-avatar',
    name: 'Test avatar',
    kind: 'avatar',
    engine: 'fake',
    engineOptions: {},
    capabilities: { resolutions: [{ resolution: '480p', width: 640, height: 480 }] },
    pricing: { unit: 'second', credits: 1, category: null },
  },
]);

interface Avatar {
  avatarId: string;
  name: string;
  portraitMediaId: string;
  voiceModelId: string | null;
}

async function avatars(t: TestApp, apiKey: string): Promise<Avatar[]> {
  const data = await gqlOk<{ listAvatars: { nodes: Avatar[] } }>(
    t.url,
    apiKey,
    '{ listAvatars(first: 100) { nodes { avatarId name portraitMediaId voiceModelId } } }',
  );
  return data.listAvatars.nodes;
}

/** The account's media rows and their states, straight from the database. */
async function mediaStates(database: Database, accountId: string): Promise<string[]> {
  const rows = await database.db
    .selectFrom('media')
    .select('state')
    .where('account_id', '=', accountId)
    .execute();
  return rows.map((r) => r.state);
}

const portraitFile = async () => ({
  name: 'me.png',
  mimeType: 'image/png',
  buffer: await testPicture(256, 256),
});

const item = (id: string) => `#avatar-list li[data-avatar-id="${id}"]`;

async function createAvatar(page: Page, name: string): Promise<void> {
  await page.fill('#avatar-form input[name=name]', name);
  await page.setInputFiles('#avatar-form input[name=portraitMediaId]', await portraitFile());
  await page.click('#avatar-form button[type=submit]');
  await page.waitForSelector(`#avatar-list h4:has-text("${name}")`);
}

describe('avatars in the web console (issue 33)', { skip: withoutBrowser }, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  const pageErrors: string[] = [];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: { MODELS: models, UPLOAD_MAX_BYTES: String(maxBytes) },
    });
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), []);
  });
  after(async () => {
    await t?.close();
    await browser?.close();
    await database?.close();
  });

  it('makes an avatar from a portrait, offers it to Generate at once, speaks, deletes', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    assert.equal(await page.textContent('#no-avatars'), 'No avatars yet.');
    // The Generate form on "Avatar video" before there is one: a pointer to the section.
    await page.selectOption('#kind', 'avatar');
    await page.waitForSelector('#avatar-field a[href="#avatars"]');
    await assertAccessible(page);

    await createAvatar(page, 'Ada');
    const [made] = await avatars(t, seeded.apiKey);
    assert.equal(made?.name, 'Ada');
    assert.deepEqual(await mediaStates(database, seeded.account.id), ['ready']);
    // Listed with its portrait, which the browser could load under the page's policy.
    const portrait = `${item(made!.avatarId)} img.thumb`;
    await page.waitForFunction(
      (selector) => (document.querySelector(selector) as HTMLImageElement | null)?.naturalWidth,
      portrait,
    );
    assert.equal(await page.getAttribute(portrait, 'alt'), 'Portrait of Ada');
    assert.match((await page.textContent('#avatars-message')) ?? '', /Ada is ready/);
    // Offered by the Generate form without a reload, chosen.
    await page.waitForSelector('#generate-form select[name=avatarId]');
    assert.equal(await page.inputValue('#generate-form select[name=avatarId]'), made!.avatarId);
    await assertAccessible(page);
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#avatars').screenshot({
      path: path.join(screenshots, 'console-avatars.png'),
    });

    // An avatar video with it, on the fake engine: finished, and asked with that avatar.
    await page.fill('#generate-form textarea[name=script]', 'Hello from the console.');
    // In another voice than the avatar's own, chosen from every voice.
    const voice = await page.$eval(
      '#generate-form select[name=voiceModelId] option:nth-child(2)',
      (o) => (o as HTMLOptionElement).value,
    );
    await page.selectOption('#generate-form select[name=voiceModelId]', voice);
    await page.click('#generate-form button[type=submit]');
    await page.waitForSelector('#task-status[data-finish-code="0"]');
    const contentId = await page.getAttribute('#result article.content', 'data-content-id');
    const { getContent } = await gqlOk<{
      getContent: { input: { avatarId: string; voiceModelId: string } };
    }>(t.url, seeded.apiKey, 'query ($id: ID!) { getContent(contentId: $id) { input } }', {
      id: contentId,
    });
    assert.equal(getContent.input.avatarId, made!.avatarId);
    assert.equal(getContent.input.voiceModelId, voice);

    // Or a recording instead of a script, uploaded when Generate is pressed.
    await page.fill('#generate-form textarea[name=script]', '');
    await page.setInputFiles('#generate-form input[name=audioMediaId]', {
      name: 'hello.wav',
      mimeType: 'audio/wav',
      buffer: await testTone(1),
    });
    await page.waitForSelector('#estimate:has-text("Priced by the recording")');
    await page.click('#generate-form button[type=submit]');
    await page.waitForFunction((first) => {
      const status = document.getElementById('task-status');
      const shown = document
        .querySelector('#result article.content')
        ?.getAttribute('data-content-id');
      return status?.dataset.finishCode === '0' && shown !== first;
    }, contentId);
    const spoken = await page.getAttribute('#result article.content', 'data-content-id');
    const recorded = await gqlOk<{
      getContent: { input: { audioMediaId?: string; script?: string | null } };
    }>(t.url, seeded.apiKey, 'query ($id: ID!) { getContent(contentId: $id) { input } }', {
      id: spoken,
    });
    assert.match(recorded.getContent.input.audioMediaId ?? '', /./, 'asked with the recording');
    assert.equal(recorded.getContent.input.script ?? null, null, 'and no script');

    // Deleted after its confirmation; "Keep it" first changes nothing.
    await page.click(`${item(made!.avatarId)} button[data-action=delete]`);
    await page.click(`${item(made!.avatarId)} button[data-action=keep]`);
    assert.equal((await avatars(t, seeded.apiKey)).length, 1);
    await page.click(`${item(made!.avatarId)} button[data-action=delete]`);
    await assertAccessible(page);
    await page.click(`${item(made!.avatarId)} button[data-action=confirm-delete]`);
    await page.waitForSelector('#no-avatars');
    assert.deepEqual(await avatars(t, seeded.apiKey), []);
    assert.match((await page.textContent('#avatars-message')) ?? '', /Ada is deleted/);
    await page.waitForSelector('#avatar-field a[href="#avatars"]');
  });

  it('refuses a file that is no image, one too large, and bytes that lie, next to the field', async (test) => {
    const seeded = await seedAccount(t.app);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const field = '#avatar-form input[name=portraitMediaId]';
    const error = '#avatar-form-portraitMediaId-error';
    assert.equal(
      await page.getAttribute(field, 'accept'),
      'image/png,image/jpeg,image/webp,image/gif',
    );
    const refused = async (file: { name: string; mimeType: string; buffer: Buffer }) => {
      await page.fill('#avatar-form input[name=name]', 'Refused');
      await page.setInputFiles(field, file);
      await page.click('#avatar-form button[type=submit]');
      await page.waitForSelector(error);
      assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true');
      assert.equal(await page.locator('#avatar-form .field-error').count(), 1, 'no stale error');
      return (await page.textContent(error)) ?? '';
    };

    // Not an image: the browser says so, and asks the server nothing.
    const text = { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('notes') };
    assert.match(await refused(text), /notes\.txt is not an image.*PNG, JPEG, WebP or GIF/);
    assert.deepEqual(await mediaStates(database, seeded.account.id), []);
    await assertAccessible(page);

    // Over UPLOAD_MAX_BYTES: createUpload refuses it before any byte moves.
    const big = {
      name: 'big.png',
      mimeType: 'image/png',
      buffer: Buffer.concat([await testPicture(64, 64), Buffer.alloc(maxBytes)]),
    };
    assert.match(await refused(big), /too large: at most 200,000 bytes/);
    assert.deepEqual(await mediaStates(database, seeded.account.id), []);

    // Named .png, but no image: Atelier's upload route finds out and refuses the bytes; the
    // media stays unusable, and no avatar is made.
    const fake = { name: 'fake.png', mimeType: 'image/png', buffer: Buffer.alloc(2_000, 7) };
    assert.match(await refused(fake), /image|bytes/i);
    assert.deepEqual(await mediaStates(database, seeded.account.id), ['pending']);
    assert.deepEqual(await avatars(t, seeded.apiKey), []);
    await assertAccessible(page);

    // A real portrait then goes through, and the error goes with the old file.
    await createAvatar(page, 'Grace');
    assert.equal(await page.locator('#avatar-form .field-error').count(), 0);
    assert.deepEqual(
      (await avatars(t, seeded.apiKey)).map((a) => a.name),
      ['Grace'],
    );
  });

  it('makes and deletes an avatar with the keyboard alone', async (test) => {
    const seeded = await seedAccount(t.app);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    // Listening long before the key press: Playwright turns on catching the browser's file
    // chooser with a message of its own, which must land before the chooser opens.
    const chooser = page.waitForEvent('filechooser');
    const active = () =>
      page.evaluate(() =>
        `${document.activeElement?.tagName} ${document.activeElement?.textContent ?? ''}`.trim(),
      );
    await page.focus('#avatar-form input[name=name]');
    await page.keyboard.type('Keys');
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(() => (document.activeElement as HTMLInputElement).name),
      'portraitMediaId',
    );
    await page.keyboard.press('Space'); // opens the file chooser, where a person picks the file
    await (await chooser).setFiles(await portraitFile());
    await page.keyboard.press('Tab'); // the default voice: none
    await page.keyboard.press('Tab');
    assert.equal(await active(), 'BUTTON Create the avatar');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#avatar-list h4:has-text("Keys")');
    assert.match(await active(), /Keys is ready/, 'focus on what happened');
    const [made] = await avatars(t, seeded.apiKey);
    assert.equal(made?.voiceModelId, null);
    await page.focus(`${item(made!.avatarId)} button[data-action=delete]`);
    await page.keyboard.press('Enter');
    assert.equal(await active(), 'BUTTON Keep it');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await active(), 'BUTTON Yes, delete it');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#no-avatars');
    assert.match(await active(), /Keys is deleted/, 'focus on what happened');
    assert.deepEqual(await avatars(t, seeded.apiKey), []);
    await assertAccessible(page);
  });

  it('fits a phone-sized screen', async (test) => {
    const seeded = await seedAccount(t.app);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
    });
    await createAvatar(page, 'A portrait with a rather long name for a small screen');
    const [made] = await avatars(t, seeded.apiKey);
    await page.click(`${item(made!.avatarId)} button[data-action=delete]`);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.equal(overflow, 0, 'nothing wider than the screen');
    await assertAccessible(page);
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#avatars').screenshot({
      path: path.join(screenshots, 'console-avatars-phone.png'),
    });
  });
});
