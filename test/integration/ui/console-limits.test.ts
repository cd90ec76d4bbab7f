import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible, byId, openConsole } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { mcpAccessToken } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 33: the spending limits of API keys and MCP connections, set, changed and removed in
// the console's API keys and AI agents sections, checked against what the API then holds. A
// refused value is shown next to its field and changes nothing.

interface Limits {
  credits: { category: string; period: string; credits: number; spent: number }[];
  kinds: string[] | null;
  modelIds: string[] | null;
}

async function keyLimits(t: TestApp, apiKey: string, apiKeyId: string): Promise<Limits | null> {
  const res = await graphql<{ listApiKeys: { id: string; limits: Limits | null }[] }>(t.url, {
    query:
      '{ listApiKeys { id limits { credits { category period credits spent } kinds modelIds } } }',
    apiKey,
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.listApiKeys.find((k) => k.id === apiKeyId)!.limits;
}

async function connectionLimits(t: TestApp, apiKey: string): Promise<(Limits | null)[]> {
  const res = await graphql<{ listPersonalMcpConnections: { limits: Limits | null }[] }>(t.url, {
    query:
      '{ listPersonalMcpConnections { limits { credits { category period credits spent } kinds modelIds } } }',
    apiKey,
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.listPersonalMcpConnections.map((c) => c.limits);
}

describe('spending limits in the web console (issue 33)', { skip: withoutBrowser }, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  const pageErrors: string[] = [];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, { env: { MODELS: testModels } });
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), []);
  });
  after(async () => {
    await t?.close();
    await browser?.close();
    await database?.close();
  });

  it('sets a daily limit on a key, refuses 0 and -5 next to the field, shows spending, removes it', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const editor = `details[data-limits-for="${seeded.apiKeyId}"]`;
    const form = `#limits-${seeded.apiKeyId}`;
    const creditsField = `${form} input[name="limits.credits[0].credits"]`;
    const creditsError = byId(`limits-${seeded.apiKeyId}-limits.credits[0].credits-error`);
    await page.click(`${editor} summary`);
    await page.click(`${form} button:has-text("Add a credit limit")`);
    assert.equal(
      await page.inputValue(`${form} input[name="limits.credits[0].category"]`),
      'standard',
    );

    // Refused values: the error next to the field, and nothing changed on the server.
    for (const bad of ['0', '-5']) {
      await page.fill(creditsField, bad);
      await page.click(`${form} button[type=submit]`);
      await page.waitForSelector(creditsError);
      assert.match((await page.textContent(creditsError)) ?? '', /must be 1 to/);
      assert.equal(await page.getAttribute(creditsField, 'aria-invalid'), 'true');
      assert.equal(await page.locator(`${form} .field-error`).count(), 1, 'one error, not two');
      assert.equal(await keyLimits(t, seeded.apiKey, seeded.apiKeyId), null);
      assert.equal(await page.isEnabled(`${form} button[type=submit]`), true);
    }
    await assertAccessible(page);

    await page.fill(creditsField, '50');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('#keys [role=status]:has-text("The limits of test are saved")');
    assert.deepEqual(await keyLimits(t, seeded.apiKey, seeded.apiKeyId), {
      credits: [{ category: 'standard', period: 'day', credits: 50, spent: 0 }],
      kinds: null,
      modelIds: null,
    });
    const line = `#key-list li[data-key-id="${seeded.apiKeyId}"]`;
    assert.match((await page.textContent(line)) ?? '', /spent 0 of 50 standard this day/);
    assert.equal(await page.locator('#keys .field-error').count(), 0, 'no stale error');
    assert.equal(await page.getAttribute(editor, 'open'), '', 'the editor stays open');
    await assertAccessible(page);

    // What the key spends shows against its limit.
    const task = await submitOk(t.url, seeded.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a cap',
    });
    await waitForTask(t.url, seeded.apiKey, task.taskId);
    const spent = (await keyLimits(t, seeded.apiKey, seeded.apiKeyId))!.credits[0]!.spent;
    assert.ok(spent > 0);
    await page.reload();
    await page.waitForSelector('[data-testid=console][data-ready=true]');
    assert.match(
      (await page.textContent(line)) ?? '',
      new RegExp(`spent ${spent} of 50 standard this day`),
    );

    // Changed: more credits, images only; what was spent today still counts.
    await page.click(`${editor} summary`);
    await page.fill(creditsField, '80');
    await page.check(`${form} input[name=kind][value=image]`);
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector(`${line}:has-text("spent ${spent} of 80 standard this day")`);
    assert.deepEqual(await keyLimits(t, seeded.apiKey, seeded.apiKeyId), {
      credits: [{ category: 'standard', period: 'day', credits: 80, spent }],
      kinds: ['image'],
      modelIds: null,
    });

    // An unknown model is refused next to the model field.
    await page.fill(`${form} input[name="limits.modelIds"]`, 'mdl_nowhere');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector(byId(`limits-${seeded.apiKeyId}-limits.modelIds-error`));
    assert.match(
      (await page.textContent(byId(`limits-${seeded.apiKeyId}-limits.modelIds-error`))) ?? '',
      /no model "mdl_nowhere"/,
    );
    assert.deepEqual((await keyLimits(t, seeded.apiKey, seeded.apiKeyId))!.modelIds, null);

    await page.click(`${form} button:has-text("Remove every limit")`);
    await page.waitForSelector('#keys [role=status]:has-text("test has no spending limits now")');
    assert.equal(await keyLimits(t, seeded.apiKey, seeded.apiKeyId), null);
    assert.doesNotMatch((await page.textContent(line)) ?? '', /spent/);
    await assertAccessible(page);
  });

  it('limits an agent’s connection with the keyboard alone', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    await mcpAccessToken(t, seeded.account.id);
    const page = await openConsole(browser, t, seeded.account.id, test, pageErrors);
    const editor = '#connection-list details.limits-editor';
    await page.waitForSelector(editor);
    await page.focus(`${editor} summary`);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab'); // the only button of an empty list: "Add a credit limit"
    assert.equal(
      await page.evaluate(() => document.activeElement?.textContent),
      'Add a credit limit',
    );
    await page.keyboard.press('Enter'); // a row, its credits field focused
    await page.keyboard.type('20');
    await page.keyboard.press('Enter'); // submits the form
    await page.waitForSelector('#mcp [role=status]:has-text("are saved")');
    assert.deepEqual(await connectionLimits(t, seeded.apiKey), [
      {
        credits: [{ category: 'standard', period: 'day', credits: 20, spent: 0 }],
        kinds: null,
        modelIds: null,
      },
    ]);
    assert.equal(
      await page.evaluate(() => document.activeElement?.closest('details')?.open),
      true,
      'focus stays on the editor just saved',
    );
    await assertAccessible(page);
  });
});
