import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible, byId, openConsole } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { countContents } from '../../helpers/generation.ts';
import { gqlOk, testPicture } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 33: own elements in the console, driven in Chromium: one made from an uploaded picture,
// listed beside the public library (and by kind), ticked in the Generate form without a reload
// and carried by the image generation's input (getContent), deleted after its confirmation; a
// refusal said next to its field that makes nothing; the video form's starting image
// (image-to-video) uploaded on submit, where the model's capabilities offer one; elements only
// where the model takes them; with the keyboard alone, and on a phone-sized screen.

const screenshots = process.env.SCREENSHOT_DIR ?? path.join('.tmp', 'screenshots');

const fake = { engine: 'fake', engineOptions: {} };
const imageCapabilities = {
  sizes: [{ width: 64, height: 64, aspectRatio: '1:1', maxCount: 1 }],
  formats: ['png'],
};
const videoFormats = [
  {
    resolution: '360p',
    aspectRatio: '16:9',
    width: 640,
    height: 360,
    fps: [24],
    maxDurationSeconds: 5,
  },
];
const models = JSON.stringify([
  {
    ...fake,
    modelId: 'mdl_test-image',
    name: 'Image, one element',
    kind: 'image',
    capabilities: { ...imageCapabilities, maxElements: 1 },
    pricing: { unit: 'image', credits: 1, category: null },
  },
  {
    ...fake,
    modelId: 'mdl_test-plain',
    name: 'Image, no elements',
    kind: 'image',
    capabilities: { ...imageCapabilities, maxElements: 0 },
    pricing: { unit: 'image', credits: 1, category: null },
  },
  {
    ...fake,
    modelId: 'mdl_test-motion',
    name: 'Video, text or image',
    kind: 'video',
    capabilities: { modes: ['text', 'image'], formats: videoFormats },
    pricing: { unit: 'second', credits: 1, category: null },
  },
  {
    ...fake,
    modelId: 'mdl_test-scene',
    name: 'Video, text only',
    kind: 'video',
    capabilities: { modes: ['text'], formats: videoFormats, maxElements: 0 },
    pricing: { unit: 'second', credits: 1, category: null },
  },
]);

interface Element {
  elementId: string;
  kind: string;
  name: string;
  description: string | null;
  public: boolean;
}

async function ownElements(t: TestApp, apiKey: string): Promise<Element[]> {
  const data = await gqlOk<{ listElements: { nodes: Element[] } }>(
    t.url,
    apiKey,
    '{ listElements(first: 100) { nodes { elementId kind name description public } } }',
  );
  return data.listElements.nodes.filter((e) => !e.public);
}

async function inputOf(t: TestApp, apiKey: string, page: Page): Promise<Record<string, unknown>> {
  const contentId = await page.getAttribute('#result article.content', 'data-content-id');
  const data = await gqlOk<{ getContent: { input: Record<string, unknown> } }>(
    t.url,
    apiKey,
    'query ($id: ID!) { getContent(contentId: $id) { input } }',
    { id: contentId },
  );
  return data.getContent.input;
}

const picture = async (name = 'kite.png') => ({
  name,
  mimeType: 'image/png',
  buffer: await testPicture(128, 128),
});

const item = (id: string) => `#element-list li[data-element-id="${id}"]`;

async function addElement(page: Page, name: string): Promise<void> {
  await page.selectOption('#element-form select[name=kind]', 'object');
  await page.fill('#element-form input[name=name]', name);
  await page.fill('#element-form textarea[name=description]', 'a red kite with a long tail');
  await page.setInputFiles('#element-form input[name=mediaId]', await picture());
  await page.click('#element-form button[type=submit]');
  await page.waitForSelector(`#element-list h4:has-text("${name}")`);
}

describe('own elements in the web console (issue 33)', { skip: withoutBrowser }, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  const pageErrors: string[] = [];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, { env: { MODELS: models } });
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), []);
  });
  after(async () => {
    await t?.close();
    await browser?.close();
    await database?.close();
  });

  it('adds an element, ticks it for an image generation, deletes it', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    await page.selectOption('#model', 'mdl_test-image');
    await page.waitForSelector('#generate-form #elements-field legend:has-text("up to 1")');
    const libraryBoxes = await page.locator('#elements-field input[name=elementId]').count();

    await addElement(page, 'Red kite');
    const [own] = await ownElements(t, seeded.apiKey);
    assert.deepEqual(
      { kind: own?.kind, name: own?.name, description: own?.description },
      { kind: 'object', name: 'Red kite', description: 'a red kite with a long tail' },
    );
    const id = own!.elementId;
    await page.waitForSelector(`${item(id)} .tag:has-text("yours")`);
    await page.waitForFunction(
      (selector) => (document.querySelector(selector) as HTMLImageElement | null)?.naturalWidth,
      `${item(id)} img.thumb`,
    );
    // By kind: an object is listed under objects, not under styles.
    await page.selectOption('#element-kind-filter', 'style');
    await page.waitForSelector(item(id), { state: 'detached' });
    await page.selectOption('#element-kind-filter', 'object');
    await page.waitForSelector(item(id));
    await assertAccessible(page);

    // The Generate form offers it at once; ticked, the submitted input carries it.
    const box = `#elements-field input[value="${id}"]`;
    await page.waitForSelector(box);
    assert.equal(
      await page.locator('#elements-field input[name=elementId]').count(),
      libraryBoxes + 1,
    );
    await page.check(box);
    await page.fill('#generate-form textarea[name=prompt]', 'a kite over the sea');
    await page.waitForSelector('#estimate:has-text("Costs")');
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#elements').screenshot({
      path: path.join(screenshots, 'console-elements.png'),
    });
    await page.locator('#generate').screenshot({
      path: path.join(screenshots, 'generate-elements.png'),
    });
    await page.click('#generate-form button[type=submit]');
    await page.waitForSelector('#task-status[data-finish-code="0"]');
    assert.deepEqual((await inputOf(t, seeded.apiKey, page)).elementIds, [id]);

    // Deleted after its confirmation; "Keep it" first changes nothing.
    await page.click(`${item(id)} button[data-action=delete]`);
    await page.click(`${item(id)} button[data-action=keep]`);
    assert.equal((await ownElements(t, seeded.apiKey)).length, 1);
    await page.click(`${item(id)} button[data-action=delete]`);
    await assertAccessible(page);
    await page.click(`${item(id)} button[data-action=confirm-delete]`);
    await page.waitForSelector(item(id), { state: 'detached' });
    assert.deepEqual(await ownElements(t, seeded.apiKey), []);
    assert.match((await page.textContent('#elements-message')) ?? '', /Red kite is deleted/);
    await page.waitForSelector(box, { state: 'detached' });
    // Library elements have no delete button: they are everyone's.
    assert.equal(await page.locator('#element-list button[data-action=delete]').count(), 0);
  });

  it('refuses what it cannot take next to the field, and makes nothing', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    await page.selectOption('#model', 'mdl_test-image');
    await page.waitForSelector('#generate-form #elements-field legend:has-text("up to 1")');
    // No name: said next to it.
    await page.setInputFiles('#element-form input[name=mediaId]', await picture());
    await page.click('#element-form button[type=submit]');
    await page.waitForSelector('#element-form-name-error');
    // A text file: said next to the picture, and the previous error is gone.
    await page.fill('#element-form input[name=name]', 'Notes');
    await page.setInputFiles('#element-form input[name=mediaId]', {
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('notes'),
    });
    await page.click('#element-form button[type=submit]');
    await page.waitForSelector('#element-form-mediaId-error');
    assert.equal(await page.locator('#element-form .field-error').count(), 1, 'no stale error');
    assert.deepEqual(await ownElements(t, seeded.apiKey), []);
    await assertAccessible(page);

    // More elements than the model takes: the refusal next to the elements, nothing charged.
    const boxes = page.locator('#elements-field input[name=elementId]');
    assert.ok((await boxes.count()) >= 2, 'the public library has elements');
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await page.fill('#generate-form textarea[name=prompt]', 'too many things');
    await page.click('#generate-form button[type=submit]');
    await page.waitForSelector('#generate-form-elementIds-error');
    assert.equal(await page.textContent('#task-status'), 'Not submitted.');
    assert.equal(await countContents(database, seeded.account.id), 0);
    await assertAccessible(page);

    // A model that takes no elements shows none.
    await page.selectOption('#model', 'mdl_test-plain');
    await page.waitForSelector('#elements-field', { state: 'detached' });
  });

  it('animates an uploaded starting image where the video model offers one', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    await page.selectOption('#kind', 'video');
    await page.selectOption('#model', 'mdl_test-motion');
    const field = '#generate-form input[name=imageMediaId]';
    await page.waitForSelector(field);
    assert.equal(await page.getAttribute(field, 'required'), null, 'optional beside text');
    // A file that is no image: refused next to the field before anything is submitted.
    await page.fill('#generate-form textarea[name=prompt]', 'the picture comes alive');
    await page.setInputFiles(field, {
      name: 'a.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('a'),
    });
    await page.click('#generate-form button[type=submit]');
    await page.waitForSelector('#generate-form-imageMediaId-error');
    assert.equal(await countContents(database, seeded.account.id), 0);
    await assertAccessible(page);

    await page.setInputFiles(field, await picture('start.png'));
    await page.click('#generate-form button[type=submit]');
    await page.waitForSelector('#task-status[data-finish-code="0"]');
    assert.equal(await page.locator('#generate-form .field-error').count(), 0, 'no stale error');
    const input = await inputOf(t, seeded.apiKey, page);
    assert.match(String(input.imageMediaId), /^med_/);
    const { getDownloadUrls } = await gqlOk<{ getDownloadUrls: { mediaId: string }[] }>(
      t.url,
      seeded.apiKey,
      'query ($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { mediaId } }',
      { ids: [input.imageMediaId] },
    );
    assert.equal(getDownloadUrls.length, 1, 'the starting image is media of the account');

    // A text-only model without elements: neither field.
    await page.selectOption('#model', 'mdl_test-scene');
    await page.waitForSelector(field, { state: 'detached' });
    assert.equal(await page.locator('#elements-field').count(), 0);
  });

  it('adds and deletes an element with the keyboard alone', async (test) => {
    const seeded = await seedAccount(t.app);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    // Listening long before the key press: Playwright turns on catching the browser's file
    // chooser with a message of its own, which must land before the chooser opens.
    const chooser = page.waitForEvent('filechooser');
    const active = () =>
      page.evaluate(() =>
        `${document.activeElement?.tagName} ${document.activeElement?.textContent ?? ''}`.trim(),
      );
    await page.focus('#element-form select[name=kind]');
    await page.keyboard.press('ArrowDown'); // Object
    await page.keyboard.press('Tab');
    await page.keyboard.type('Lantern');
    await page.keyboard.press('Tab');
    await page.keyboard.type('a paper lantern');
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(() => (document.activeElement as HTMLInputElement).name),
      'mediaId',
    );
    await page.keyboard.press('Space'); // opens the file chooser, where a person picks the file
    await (await chooser).setFiles(await picture('lantern.png'));
    await page.keyboard.press('Tab');
    assert.equal(await active(), 'BUTTON Add the element');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#element-list h4:has-text("Lantern")');
    assert.match(await active(), /Lantern is added/, 'focus on what happened');
    const [own] = await ownElements(t, seeded.apiKey);
    assert.deepEqual([own?.kind, own?.name], ['object', 'Lantern']);
    await page.focus(`${item(own!.elementId)} button[data-action=delete]`);
    await page.keyboard.press('Enter');
    assert.equal(await active(), 'BUTTON Keep it');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await active(), 'BUTTON Yes, delete it');
    await page.keyboard.press('Enter');
    await page.waitForSelector(byId(`element-${own!.elementId}-title`), { state: 'detached' });
    assert.match(await active(), /Lantern is deleted/, 'focus on what happened');
    assert.deepEqual(await ownElements(t, seeded.apiKey), []);
    await assertAccessible(page);
  });

  it('fits a phone-sized screen', async (test) => {
    const seeded = await seedAccount(t.app);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
    });
    await addElement(page, 'A kite with a rather long name for a small screen');
    const [own] = await ownElements(t, seeded.apiKey);
    await page.click(`${item(own!.elementId)} button[data-action=delete]`);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.equal(overflow, 0, 'nothing wider than the screen');
    await assertAccessible(page);
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#elements').screenshot({
      path: path.join(screenshots, 'console-elements-phone.png'),
    });
  });
});
