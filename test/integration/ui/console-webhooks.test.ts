import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { systemClock } from '../../../src/shared/clock.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible, openConsole } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';
import { startWebhookReceiver, verifyWebhook } from '../../helpers/webhook-receiver.ts';

// Issue 33: webhooks in the console, driven in Chromium against a receiver on 127.0.0.1 (the
// development switch WEBHOOK_ALLOW_LOCALHOST admits it, and refuses every other host): an
// endpoint added with its secret shown once, a bad URL refused next to its field, a real
// delivery listed with its attempt and replayed, disable and enable, a change, a rotation, and
// a delete after its confirmation; with the keyboard alone, and on a phone-sized screen.

const screenshots = process.env.SCREENSHOT_DIR ?? path.join('.tmp', 'screenshots');

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  creditsLowBelow: number;
  description: string;
}

async function endpoints(t: TestApp, apiKey: string): Promise<Endpoint[]> {
  const res = await graphql<{ listWebhookEndpoints: Endpoint[] }>(t.url, {
    query:
      '{ listWebhookEndpoints { id url events enabled disabledReason creditsLowBelow description } }',
    apiKey,
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.listWebhookEndpoints;
}

/** The state of an endpoint's newest delivery, as the API tells it. */
async function newestDelivery(t: TestApp, apiKey: string, endpointId: string) {
  const res = await graphql<{
    listWebhookDeliveries: { id: string; state: string; attempts: unknown[] }[];
  }>(t.url, {
    query:
      'query ($id: ID!) { listWebhookDeliveries(endpointId: $id) { id state attempts { at } } }',
    variables: { id: endpointId },
    apiKey,
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.listWebhookDeliveries[0];
}

/** Waits until the API says `holds` of the newest delivery (each read is a round trip). */
async function deliveryUntil(
  t: TestApp,
  apiKey: string,
  endpointId: string,
  holds: (d: { state: string; attempts: unknown[] }) => boolean,
) {
  for (let i = 0; i < 200; i++) {
    const d = await newestDelivery(t, apiKey, endpointId);
    if (d !== undefined && holds(d)) return d;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail('the delivery never reached the expected state');
}

/** The endpoint's article in the list. */
const item = (id: string) => `#webhook-list article[data-endpoint-id="${id}"]`;

async function addEndpoint(page: Page, url: string): Promise<string> {
  await page.fill('#webhook-form input[name=url]', url);
  await page.click('#webhook-form button[type=submit]');
  await page.waitForSelector('#webhook-secret-value');
  return (await page.textContent('#webhook-secret-value')) ?? '';
}

describe('webhooks in the web console (issue 33)', { skip: withoutBrowser }, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  const pageErrors: string[] = [];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: { MODELS: testModels, WEBHOOK_ALLOW_LOCALHOST: 'true' },
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

  it('adds an endpoint (secret once), refuses a bad URL, lists and replays a delivery, deletes', async (test) => {
    const seeded: SeededAccount = await seedAccount(t.app, { credits: { standard: 100 } });
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    assert.equal(await page.textContent('#no-webhooks'), 'No endpoints yet.');

    // A URL deliveries may not go to: the error next to the field, and nothing created.
    await page.fill('#webhook-form input[name=url]', 'https://10.0.0.1/hook');
    await page.click('#webhook-form button[type=submit]');
    await page.waitForSelector('#webhook-form-url-error');
    assert.match((await page.textContent('#webhook-form-url-error')) ?? '', /10\.0\.0\.1/);
    assert.equal(await page.getAttribute('#webhook-form input[name=url]', 'aria-invalid'), 'true');
    assert.equal(await page.isHidden('#webhook-secret'), true);
    assert.deepEqual(await endpoints(t, seeded.apiKey), []);
    await assertAccessible(page);
    // No event ticked: the error goes next to the events.
    for (const box of await page.$$('#webhook-form input[name=event]:checked')) await box.uncheck();
    await page.fill('#webhook-form input[name=url]', receiver.url);
    await page.click('#webhook-form button[type=submit]');
    await page.waitForSelector('#webhook-form-events-error');
    assert.equal(await page.locator('#webhook-form .field-error').count(), 1, 'no stale error');
    assert.deepEqual(await endpoints(t, seeded.apiKey), []);
    await assertAccessible(page);

    // Added: the secret shown once, the form fresh, the endpoint on the server.
    await page.check('#webhook-form input[name=event][value=task_finished]');
    await page.fill('#webhook-form input[name=description]', 'console receiver');
    const secret = await addEndpoint(page, receiver.url);
    assert.match(secret, /^whsec_/);
    assert.match((await page.textContent('#webhook-secret')) ?? '', /Shown once/);
    assert.equal(await page.locator('#webhook-form .field-error').count(), 0, 'no stale error');
    assert.equal(await page.inputValue('#webhook-form input[name=url]'), '', 'a fresh form');
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'webhook-secret-copy',
      'focus on the copy button',
    );
    const [created] = await endpoints(t, seeded.apiKey);
    assert.deepEqual(
      { url: created?.url, events: created?.events, description: created?.description },
      { url: receiver.url, events: ['task_finished'], description: 'console receiver' },
    );
    const id = created!.id;
    await page.waitForSelector(`${item(id)} .tag:has-text("enabled")`);
    await assertAccessible(page);
    await page.reload();
    await page.waitForSelector('[data-testid=console][data-ready=true]');
    assert.equal(await page.isHidden('#webhook-secret'), true);
    assert.doesNotMatch((await page.content()) ?? '', new RegExp(secret.slice(6, 30)));

    // A real delivery, signed with the secret shown, listed with its attempt, and replayed.
    await submitOk(t.url, seeded.apiKey, { modelId: 'mdl_test-fast', prompt: 'a hook' });
    const [first] = await receiver.received(1);
    verifyWebhook(secret, first!, systemClock);
    const deliveryId = String(first!.headers['webhook-id']);
    await deliveryUntil(t, seeded.apiKey, id, (d) => d.state === 'delivered');
    await page.click(`${item(id)} details.deliveries-panel summary`);
    const replay = `${item(id)} button[data-delivery-id="${deliveryId}"]`;
    await page.waitForSelector(replay);
    const row = page.locator(`${item(id)} tr`, {
      has: page.locator(`button[data-delivery-id="${deliveryId}"]`),
    });
    assert.match((await row.textContent()) ?? '', /task\.finished.*delivered.*HTTP 200 · \d+ ms/);
    await assertAccessible(page);
    await page.click(replay);
    const [, again] = await receiver.received(2);
    assert.equal(again!.headers['webhook-id'], deliveryId, 'the same webhook-id');
    await page.waitForSelector(`${item(id)} [role=status]:has-text("Sent again")`);
    await assertAccessible(page);

    // Every delivery since a time: a time to come is refused next to the field, nothing sent.
    const since = `#replay-since-${id}`;
    const localTime = (offsetMs: number) =>
      page.evaluate((offset) => {
        const at = new Date(Date.now() + offset);
        return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
      }, offsetMs);
    await page.fill(`${since} input[name=since]`, await localTime(3_600_000));
    await page.click(`${since} button[type=submit]`);
    await page.waitForSelector(`${since}-since-error:has-text("in the past")`);
    await assertAccessible(page);
    await page.fill(`${since} input[name=since]`, await localTime(-3_600_000));
    await page.click(`${since} button[type=submit]`);
    await page.waitForSelector(`${since} [role=status]:has-text("1 delivery sent again")`);
    assert.equal(await page.locator(`${since} .field-error`).count(), 0, 'no stale error');
    const [, , replayed] = await receiver.received(3);
    assert.equal(replayed!.headers['webhook-id'], deliveryId, 'the same delivery again');

    // Disabled and enabled again, as the server then holds it.
    await page.click(`${item(id)} button[data-action=toggle]`);
    await page.waitForSelector(`${item(id)} .tag:has-text("disabled")`);
    assert.match(
      (await page.textContent(`${item(id)} .disabled-reason`)) ?? '',
      /Disabled by the account/,
    );
    assert.equal((await endpoints(t, seeded.apiKey))[0]!.enabled, false);
    await assertAccessible(page);
    await page.click(`${item(id)} button[data-action=toggle]`);
    await page.waitForSelector(`${item(id)} .tag:has-text("enabled")`);
    assert.equal((await endpoints(t, seeded.apiKey))[0]!.enabled, true);

    // A change: a threshold of 0 is refused next to it, 250 is saved.
    const edit = `#webhook-edit-${id}`;
    await page.click(`${item(id)} details.edit summary`);
    await page.fill(`${edit} input[name=creditsLowBelow]`, '0');
    await page.click(`${edit} button[type=submit]`);
    await page.waitForSelector(`#webhook-edit-${id}-creditsLowBelow-error`);
    assert.equal((await endpoints(t, seeded.apiKey))[0]!.creditsLowBelow, 100);
    await assertAccessible(page);
    await page.fill(`${edit} input[name=creditsLowBelow]`, '250');
    await page.check(`${edit} input[name=event][value=credits_low]`);
    await page.click(`${edit} button[type=submit]`);
    await page.waitForSelector(`${item(id)} .threshold:has-text("250 credits")`);
    const changed = (await endpoints(t, seeded.apiKey))[0]!;
    assert.deepEqual(
      [changed.creditsLowBelow, changed.events],
      [250, ['task_finished', 'credits_low']],
    );

    // A rotated secret, shown once, signs the next delivery.
    await page.click(`${item(id)} button[data-action=rotate]`);
    await page.waitForFunction((old) => {
      const shown = document.getElementById('webhook-secret-value')?.textContent;
      return shown !== undefined && shown !== old;
    }, secret);
    const rotated = (await page.textContent('#webhook-secret-value')) ?? '';
    assert.match(rotated, /^whsec_/);
    await submitOk(t.url, seeded.apiKey, { modelId: 'mdl_test-fast', prompt: 'rotated' });
    const [, , , fourth] = await receiver.received(4);
    verifyWebhook(rotated, fourth!, systemClock);

    // Deleted after its confirmation; "Keep it" first changes nothing.
    await page.click(`${item(id)} button[data-action=delete]`);
    await page.click(`${item(id)} button[data-action=keep]`);
    assert.equal((await endpoints(t, seeded.apiKey)).length, 1);
    await page.click(`${item(id)} button[data-action=delete]`);
    assert.equal(await page.isHidden(`${item(id)} button[data-action=delete]`), true);
    await assertAccessible(page);
    await page.click(`${item(id)} button[data-action=confirm-delete]`);
    await page.waitForSelector('#no-webhooks');
    assert.deepEqual(await endpoints(t, seeded.apiKey), []);
  });

  it('the one-off secret: made, then rotated, each shown once', async (test) => {
    const seeded = await seedAccount(t.app);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    assert.equal(await page.textContent('#one-off-rotate'), 'Make the secret');
    await page.click('#one-off-rotate');
    await page.waitForSelector('#webhook-secret-value');
    const made = (await page.textContent('#webhook-secret-value')) ?? '';
    assert.match(made, /^whsec_/);
    await page.waitForSelector('#one-off-rotate:has-text("Rotate the secret")');
    const res = await graphql<{ oneOffWebhookEndpoint: { id: string } | null }>(t.url, {
      query: '{ oneOffWebhookEndpoint { id } }',
      apiKey: seeded.apiKey,
    });
    assert.ok(res.body.data?.oneOffWebhookEndpoint?.id);
    await page.click('#one-off-rotate');
    await page.waitForFunction(
      (old) => document.getElementById('webhook-secret-value')?.textContent !== old,
      made,
    );
    assert.match((await page.textContent('#webhook-secret')) ?? '', /24 hours/);
    await assertAccessible(page);
  });

  it('adds and deletes an endpoint with the keyboard alone', async (test) => {
    const seeded = await seedAccount(t.app);
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const active = () =>
      page.evaluate(() =>
        `${document.activeElement?.tagName} ${document.activeElement?.textContent ?? ''}`.trim(),
      );
    await page.focus('#webhook-form input[name=url]');
    await page.keyboard.type(receiver.url);
    await page.keyboard.press('Enter'); // the form's default button
    await page.waitForSelector('#webhook-secret-value');
    assert.equal(await active(), 'BUTTON Copy the secret');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#webhook-secret [role=status]:not(:empty)');
    await page.keyboard.press('Tab');
    assert.equal(await active(), 'BUTTON I have saved it');
    await page.keyboard.press('Enter');
    assert.equal(await page.isHidden('#webhook-secret'), true);
    assert.equal(await active(), 'BUTTON Disable', 'focus on the new endpoint');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await active(), 'BUTTON Delete');
    await page.keyboard.press('Enter');
    assert.equal(await active(), 'BUTTON Keep it');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await active(), 'BUTTON Yes, delete it');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#no-webhooks');
    assert.deepEqual(await endpoints(t, seeded.apiKey), []);
    assert.match(await active(), /is deleted/, 'focus on what happened');
    await assertAccessible(page);
  });

  it('fits a phone-sized screen', async (test) => {
    const seeded = await seedAccount(t.app);
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
    });
    await addEndpoint(page, receiver.url);
    const [created] = await endpoints(t, seeded.apiKey);
    await submitOk(t.url, seeded.apiKey, { modelId: 'mdl_test-fast', prompt: 'a phone' });
    await receiver.received(1);
    await deliveryUntil(t, seeded.apiKey, created!.id, (d) => d.attempts.length > 0);
    await page.click(`${item(created!.id)} details.deliveries-panel summary`);
    await page.waitForSelector(`${item(created!.id)} button[data-delivery-id]`);
    await page.click(`${item(created!.id)} details.edit summary`);
    await page.click(`${item(created!.id)} button[data-action=delete]`);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.equal(overflow, 0, 'nothing wider than the screen');
    await assertAccessible(page);
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#webhooks').screenshot({
      path: path.join(screenshots, 'console-webhooks-phone.png'),
    });
  });
});
