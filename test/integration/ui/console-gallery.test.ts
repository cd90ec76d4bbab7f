import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible, openConsole } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, fakeModel, getTask, submitOk, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { gqlOk } from '../../helpers/media.ts';
import { imageModel, tokenEnv } from '../../helpers/replicate.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';

// Issue 33: the console's gallery, driven in Chromium. Cards show what each generation was
// asked (prompt or text, and its settings), its state and price, players for audio and video
// and a download link per file; filters by kind and state; "Show more" pages with the
// connection's cursor; Delete after a confirmation; Cancel of a running task (held at a step
// of a Replicate stand-in, test/helpers/standins/pace.ts). With the keyboard alone, on a
// phone, checked with axe. Live progress across a dropped connection: console-live.test.ts.

const screenshots = process.env.SCREENSHOT_DIR ?? path.join('.tmp', 'screenshots');

const standin = await ReplicateStandin.start({
  models: [{ name: 'black-forest-labs/flux-schnell', required: ['prompt'] }],
});
after(() => standin.close());

const models = JSON.stringify([
  fakeModel('mdl_test-fast', {}),
  imageModel(standin, 'mdl_rep-image', { pollMs: 20 }),
]);

const card = (contentId: string) => `#gallery-list article[data-content-id="${contentId}"]`;

async function submit(
  t: TestApp,
  apiKey: string,
  mutation: string,
  type: string,
  input: Record<string, unknown>,
) {
  const data = await gqlOk<Record<string, { contentId: string; taskId: string }>>(
    t.url,
    apiKey,
    `mutation ($input: ${type}!) { ${mutation}(input: $input) { contentId taskId } }`,
    { input },
  );
  return data[mutation]!;
}

/** Makes `count` images on the fake engine, oldest first, each finished. */
async function images(t: TestApp, apiKey: string, count: number) {
  const made = [];
  for (let i = 1; i <= count; i++) {
    const ids = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: `image ${i}` });
    await waitForTask(t.url, apiKey, ids.taskId);
    made.push(ids);
  }
  return made;
}

const contentOf = (t: TestApp, apiKey: string, id: string) =>
  graphql<{ getContent: { media: { download: { url: string } }[] } | null }>(t.url, {
    query: 'query ($id: ID!) { getContent(contentId: $id) { media { download { url } } } }',
    variables: { id },
    apiKey,
  });

/** Where the focus is, as "TAG text". */
const active = (page: Page) =>
  page.evaluate(() =>
    `${document.activeElement?.tagName} ${document.activeElement?.textContent ?? ''}`.trim(),
  );

describe('the gallery in the web console (issue 33)', {
  skip: withoutBrowser,
}, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  const pageErrors: string[] = [];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, { env: { MODELS: models, [tokenEnv]: standin.token } });
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), []);
  });
  after(async () => {
    await t?.close();
    await browser?.close();
    await database?.close();
  });

  it('shows each generation’s words, settings, state, price and players; filters; pages', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 1000 } });
    await images(t, seeded.apiKey, 12);
    const speech = await submit(t, seeded.apiKey, 'generateSpeech', 'GenerateSpeechInput', {
      modelId: 'mdl_atelier-voice',
      voiceModelId: 'voc_en-gb',
      text: 'Hello from the gallery.',
      format: 'mp3',
    });
    const video = await submit(t, seeded.apiKey, 'generateVideo', 'GenerateVideoInput', {
      modelId: 'mdl_atelier-motion',
      prompt: 'lanterns over a lake',
      resolution: '480p',
      aspectRatio: '1:1',
      durationSeconds: 1,
    });
    for (const { taskId } of [speech, video]) {
      const task = await waitForTask(t.url, seeded.apiKey, taskId, undefined, 120_000);
      assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    }
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);

    // The first page: twelve of fourteen, newest first, and a way to the rest.
    assert.equal(await page.locator('#gallery-list article.content').count(), 12);
    assert.equal(await page.textContent('#gallery-count'), '12 shown, more to show.');
    const videoCard = card(video.contentId);
    assert.match((await page.textContent(`${videoCard} blockquote.prompt`)) ?? '', /lanterns/);
    const videoSettings = (await page.textContent(`${videoCard} dl.settings`)) ?? '';
    assert.match(videoSettings, /Resolution480p/);
    assert.match(videoSettings, /Duration1 s/);
    assert.match((await page.textContent(`${videoCard} .detail`)) ?? '', /finished · 2 credits/);
    assert.equal(await page.locator(`${videoCard} video[controls]`).count(), 1);
    const speechCard = card(speech.contentId);
    assert.equal(await page.locator(`${speechCard} audio[controls]`).count(), 1);
    assert.match((await page.textContent(`${speechCard} .detail`)) ?? '', /finished · 1 credit$/);
    const speechSettings = (await page.textContent(`${speechCard} dl.settings`)) ?? '';
    assert.match(speechSettings, /Voicevoc_en-gb/);
    assert.match(speechSettings, /FormatMP3/);
    // The download link serves the file itself.
    const href = await page.getAttribute(`${speechCard} a[download]`, 'href');
    const file = await fetch(new URL(href!, t.url));
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'audio/mpeg');
    await assertAccessible(page);
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#generations').screenshot({
      path: path.join(screenshots, 'console-gallery.png'),
    });

    // The rest, after the cursor: the oldest image last, nothing twice.
    await page.click('#gallery-more');
    await page.waitForSelector('#gallery-list article.content >> nth=13');
    assert.equal(await page.locator('#gallery-list article.content').count(), 14);
    assert.equal(await page.isHidden('#gallery-more'), true);
    assert.equal(await page.textContent('#gallery-count'), '14 shown.');
    assert.equal(
      await page.textContent('#gallery-list article.content:last-child blockquote.prompt'),
      'image 1',
    );
    const ids = await page.$$eval('#gallery-list article.content', (cards) =>
      cards.map((c) => c.getAttribute('data-content-id')),
    );
    assert.equal(new Set(ids).size, 14);

    // Filters: a kind, then a kind and a state that nothing matches.
    await page.selectOption('#gallery-filters select[name=kind]', 'speech');
    await page.waitForSelector('#gallery-count:has-text("1 shown.")');
    assert.deepEqual(
      await page.$$eval('#gallery-list article.content', (cards) =>
        cards.map((c) => c.getAttribute('data-content-id')),
      ),
      [speech.contentId],
    );
    await page.selectOption('#gallery-filters select[name=kind]', 'image');
    await page.selectOption('#gallery-filters select[name=status]', 'running');
    await page.waitForSelector('#gallery-count:has-text("No generations match these filters.")');
    assert.equal(await page.locator('#gallery-list article.content').count(), 0);
    await assertAccessible(page);
  });

  it('deletes after a confirmation; "Keep it" and a refusal change nothing', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    const [first, second] = await images(t, seeded.apiKey, 2);
    const url = (await contentOf(t, seeded.apiKey, first!.contentId)).body.data!.getContent!
      .media[0]!.download.url;
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const spent = await balances(t.url, seeded.apiKey);

    await page.click(`${card(first!.contentId)} button[data-action=delete]`);
    assert.match(
      (await page.textContent(`${card(first!.contentId)} .confirm`)) ?? '',
      /download links stop working/,
    );
    assert.equal(await active(page), 'BUTTON Keep it');
    await assertAccessible(page);
    await page.click(`${card(first!.contentId)} button[data-action=keep]`);
    assert.equal(await active(page), 'BUTTON Delete');
    assert.deepEqual(errorCodes(await contentOf(t, seeded.apiKey, first!.contentId)), []);

    await page.click(`${card(first!.contentId)} button[data-action=delete]`);
    await page.click(`${card(first!.contentId)} button[data-action=confirm-delete]`);
    await page.waitForSelector(card(first!.contentId), { state: 'detached' });
    assert.equal(await page.textContent('#gallery-message'), 'The generation is deleted.');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'gallery-message');
    assert.deepEqual(errorCodes(await contentOf(t, seeded.apiKey, first!.contentId)), ['140004']);
    assert.equal((await fetch(url)).status, 404);
    assert.deepEqual(await balances(t.url, seeded.apiKey), spent, 'deleting is not a refund');
    assert.equal(await page.textContent('#gallery-count'), '1 shown.');

    // Deleted elsewhere meanwhile: the refusal in the card, which stays until read again.
    await gqlOk(t.url, seeded.apiKey, 'mutation ($id: ID!) { deleteContent(contentId: $id) }', {
      id: second!.contentId,
    });
    await page.click(`${card(second!.contentId)} button[data-action=delete]`);
    await page.click(`${card(second!.contentId)} button[data-action=confirm-delete]`);
    await page.waitForSelector(`${card(second!.contentId)} [role=alert]`);
    assert.match(
      (await page.textContent(`${card(second!.contentId)} [role=alert]`)) ?? '',
      /No content/,
    );
    assert.equal(
      await page.isEnabled(`${card(second!.contentId)} [data-action=confirm-delete]`),
      true,
    );
    await assertAccessible(page);
  });

  it('cancels a running task from its card; its credits come back', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    standin.script({ manual: true, steps: 4 });
    const prediction = standin.nextPrediction();
    const held = await submitOk(t.url, seeded.apiKey, { modelId: 'mdl_rep-image', prompt: 'held' });
    (await prediction).pace.advance(1); // started: running on the stand-in
    await waitForTask(t.url, seeded.apiKey, held.taskId, (s) => s.status === 'running');
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const heldCard = card(held.contentId);
    assert.match((await page.textContent(`${heldCard} .state`)) ?? '', /^running/);
    assert.equal(await page.locator(`${heldCard} [data-action=delete]`).count(), 0);
    await page.click(`${heldCard} button[data-action=cancel]`);
    await page.waitForSelector(`${heldCard} .state:has-text("cancelled")`);
    assert.equal(
      await page.textContent('#gallery-message'),
      'Cancelled: its credits are refunded.',
    );
    assert.equal(await active(page), 'BUTTON Delete', 'focus on what can be done next');
    const task = await getTask(t.url, seeded.apiKey, held.taskId);
    assert.equal(task.finishCode, FinishCode.Cancelled);
    assert.equal((await balances(t.url, seeded.apiKey)).standard, 100);
    await assertAccessible(page);
  });

  it('keeps the card of a run current as it goes, and shows its result when it ends', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    standin.script({ manual: true, steps: 4 });
    const prediction = standin.nextPrediction();
    const held = await submitOk(t.url, seeded.apiKey, { modelId: 'mdl_rep-image', prompt: 'live' });
    const { pace } = await prediction;
    pace.advance(1);
    await waitForTask(t.url, seeded.apiKey, held.taskId, (s) => s.status === 'running');
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const liveCard = card(held.contentId);
    await page.waitForSelector(`${liveCard} .state:has-text("running")`);
    // Submitted elsewhere (the API), followed here without a reload: progress, then the result.
    pace.advance(1);
    await page.waitForFunction(
      (selector) => /running, [1-9]\d* %/.test(document.querySelector(selector)?.textContent ?? ''),
      `${liveCard} .state`,
    );
    pace.release();
    await page.waitForSelector(`${liveCard}[data-status=finished] .state:has-text("finished")`);
    await page.waitForSelector(`${liveCard} img`);
    assert.equal(await page.locator(`${liveCard} [data-action=delete]`).count(), 1);
    assert.equal(await page.locator(`${liveCard} [data-action=cancel]`).count(), 0);
    await assertAccessible(page);
  });

  it('filters, deletes and shows more with the keyboard alone', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    await images(t, seeded.apiKey, 13);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    await page.focus('#gallery-filters select[name=status]');
    await page.keyboard.press('ArrowDown'); // Any state → Queued
    await page.waitForSelector('#gallery-count:has-text("No generations match these filters.")');
    await page.keyboard.press('ArrowUp'); // back to Any state
    await page.waitForSelector('#gallery-count:has-text("12 shown, more to show.")');
    // On to the first card's Delete, confirmed from the keyboard.
    await page.keyboard.press('Tab');
    const firstId = await page.getAttribute('#gallery-list article.content', 'data-content-id');
    for (let i = 0; i < 20 && !(await active(page)).startsWith('BUTTON Delete'); i++) {
      await page.keyboard.press('Tab');
    }
    assert.equal(await active(page), 'BUTTON Delete');
    await page.keyboard.press('Enter');
    assert.equal(await active(page), 'BUTTON Keep it');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await active(page), 'BUTTON Yes, delete it');
    await page.keyboard.press('Enter');
    await page.waitForSelector(card(firstId!), { state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'gallery-message');
    await page.focus('#gallery-more');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#gallery-count:has-text("12 shown.")');
    assert.equal(
      await page.evaluate(() => document.activeElement?.matches('article.content:last-child')),
      true,
      'focus on the first card of the new page',
    );
    await assertAccessible(page);
  });

  it('fits a phone-sized screen', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    await images(t, seeded.apiKey, 2);
    await submit(t, seeded.apiKey, 'generateSpeech', 'GenerateSpeechInput', {
      modelId: 'mdl_atelier-voice',
      voiceModelId: 'voc_en-gb',
      text: 'A phone.',
    }).then(async ({ taskId }) => {
      const task = await waitForTask(t.url, seeded.apiKey, taskId, undefined, 120_000);
      assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    });
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
    });
    await page.click('#gallery-list article.content button[data-action=delete]');
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.equal(overflow, 0, 'nothing wider than the screen');
    await assertAccessible(page);
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#generations').screenshot({
      path: path.join(screenshots, 'console-gallery-phone.png'),
    });
  });
});
