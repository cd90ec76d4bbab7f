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
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { remoteImageModel } from '../../helpers/remote-engines.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';
import { OpenAiStandin } from '../../helpers/standins/openai.ts';

// Issue 32 §5: the operator's pages of the web console, driven in Chromium. An admin finds an
// account, grants it credits with a reason and suspends it, reads a failed task's provider
// detail, the models' backends, the audit log and the usage charts; a non-admin sees none of
// them and a chart of their own usage. The clock is the real one: the browser checks its ID
// token's expiry against its own time, and the charts show the last 30 days before today.

const screenshots = process.env.SCREENSHOT_DIR ?? path.join('.tmp', 'screenshots');

async function snap(page: Page, name: string): Promise<void> {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
}

/** Uncaught errors in the pages (a chart that threw is otherwise only a missing canvas). */
const pageErrors: string[] = [];

/** Opens an admin page from the navigation and waits until it has rendered. */
async function open(page: Page, route: string): Promise<void> {
  await page.click(`#console-nav a[href="#/admin/${route}"]`);
  await page.waitForSelector(`#admin-page[data-page=${route}]`);
}

/** The UTC day a task was submitted on, as the charts and the usage report count it. */
async function dayOf(database: Database, taskId: string): Promise<string> {
  const row = await database.db
    .selectFrom('tasks')
    .select('created_at')
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
  return row.created_at.toISOString().slice(0, 10);
}

/** A chart's text alternative: its table as { day: { column: number } }. */
async function chartTable(page: Page, id: string): Promise<Record<string, Record<string, number>>> {
  return page.$eval(`[data-chart-table=${id}]`, (table) => {
    const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent ?? '');
    const rows: Record<string, Record<string, number>> = {};
    for (const tr of table.querySelectorAll('tbody tr')) {
      const [first, ...cells] = [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '');
      rows[first ?? ''] = Object.fromEntries(cells.map((c, i) => [heads[i + 1], Number(c)]));
    }
    return rows;
  });
}

interface UsageRow {
  day: string;
  modelId: string | null;
  backend: string | null;
  submissions: number;
  creditsCharged: number;
  creditsRefunded: number;
  providerFailures: number;
}

async function usageOn(
  day: string,
  t: TestApp,
  apiKey: string,
  groupBy: string[],
): Promise<UsageRow[]> {
  const from = `${day}T00:00:00Z`;
  const to = new Date(Date.parse(from) + 86_400_000).toISOString();
  const answer = await graphql<{ usageReport: UsageRow[] }>(t.url, {
    query: `query ($from: DateTime!, $to: DateTime!, $groupBy: [UsageDimension!]!) {
      usageReport(from: $from, to: $to, groupBy: $groupBy) {
        day modelId backend submissions creditsCharged creditsRefunded providerFailures } }`,
    variables: { from, to, groupBy },
    apiKey,
  });
  assert.deepEqual(errorCodes(answer), [], JSON.stringify(answer.body.errors));
  return answer.body.data!.usageReport;
}

describe('the admin pages of the web console in Chromium (issue 32 §5)', {
  skip: withoutBrowser,
}, () => {
  const providerKey = 'sk-standin-console-0123456789abcdef';
  const standin = new OpenAiStandin(providerKey);
  const modelId = 'mdl_oa-console';
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  let admin: SeededAccount;
  let user: SeededAccount;
  let failedTaskId: string;
  /** The day of the suite's two submissions (not today: a run may pass midnight UTC). */
  let submittedOn: string;

  before(async () => {
    await standin.server.listen();
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: {
        REMOTE_KEY: providerKey,
        MODELS: JSON.stringify([
          remoteImageModel(modelId, standin.baseUrl, 'gpt-image-1', { maxAttempts: 1 }),
        ]),
      },
    });
    admin = await seedAccount(t.app, { role: 'admin' });
    user = await seedAccount(t.app, { credits: { standard: 40 } });
    // One task that works and one the model server refuses, with a detail only operators see.
    standin.server.failNext(
      (r) => (r.json as { prompt?: string } | undefined)?.prompt === 'a bad size',
      1,
      {
        status: 400,
        headers: { 'content-type': 'application/json' },
        body: '{"error":{"message":"Invalid value for size: the model does not offer it","type":"invalid_request_error","param":"size","code":"invalid_value"}}',
      },
    );
    const ok = await submitOk(t.url, user.apiKey, { modelId, prompt: 'a good lighthouse' });
    assert.equal((await waitForTask(t.url, user.apiKey, ok.taskId)).finishCode, FinishCode.Ok);
    const bad = await submitOk(t.url, user.apiKey, { modelId, prompt: 'a bad size' });
    submittedOn = await dayOf(database, bad.taskId);
    failedTaskId = bad.taskId;
    const failed = await waitForTask(t.url, user.apiKey, bad.taskId);
    assert.equal(failed.finishCode, FinishCode.EngineFailure);
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), []);
  });
  after(async () => {
    await t?.close();
    await browser?.close();
    await database?.close();
    await standin.server.close();
  });

  it('lets an admin find an account, grant it credits with a reason, and suspend it', async (test) => {
    const page = await openConsole(browser, t, admin.account.id, test, pageErrors);
    assert.equal(await page.isVisible('#console-nav'), true);
    await open(page, 'accounts');
    await page.fill('#account-search-text', user.account.alias);
    await page.click('#account-search button[type=submit]');
    await page.click(`#account-results li[data-account-id="${user.account.id}"] a`);
    await page.waitForSelector(`#account-detail[data-account-id="${user.account.id}"]`);
    const before = (await balances(t.url, user.apiKey)).standard!;
    assert.match(
      (await page.textContent('#account-balances')) ?? '',
      new RegExp(`${before} standard`),
    );
    assert.match((await page.textContent('#account-detail')) ?? '', new RegExp(failedTaskId));
    await assertAccessible(page);

    // A refusal names its field, next to it, and changes nothing.
    await page.fill('#adjust-form input[name=amount]', '25');
    await page.click('#adjust-form button[type=submit]');
    await page.waitForSelector('#adjust-form-reason-error');
    assert.match(
      (await page.textContent('#adjust-form-reason-error')) ?? '',
      /1 to 200 characters/,
    );
    assert.equal(
      await page.getAttribute('#adjust-form input[name=reason]', 'aria-invalid'),
      'true',
    );
    assert.equal((await balances(t.url, user.apiKey)).standard, before);
    await assertAccessible(page);

    await page.fill('#adjust-form input[name=reason]', 'outage credit, ticket 4411');
    await page.click('#adjust-form button[type=submit]');
    await page.waitForSelector('#account-notice:has-text("balance is now")');
    assert.equal((await balances(t.url, user.apiKey)).standard, before + 25);
    assert.match(
      (await page.textContent('#account-notice')) ?? '',
      new RegExp(`Granted 25 standard: the balance is now ${before + 25} standard`),
    );
    assert.match(
      (await page.textContent('#account-balances')) ?? '',
      new RegExp(`${before + 25} standard`),
    );
    assert.equal(await page.locator('#adjust-form .field-error').count(), 0, 'no stale error');
    assert.equal(await page.inputValue('#adjust-form input[name=reason]'), '', 'a fresh form');
    // The ledger's reason and the audit entry, as the API reads them and as the page shows them.
    const audit = await graphql<{
      auditLog: { nodes: Array<{ action: string; detail: { amount: number; reason: string } }> };
    }>(t.url, {
      query: `query ($id: ID) { auditLog(filter: { accountId: $id, action: "credits.granted" }) {
        nodes { action detail } } }`,
      variables: { id: user.account.id },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(
      audit.body.data?.auditLog.nodes.map((n) => [n.detail.amount, n.detail.reason]),
      [[25, 'outage credit, ticket 4411']],
    );
    await page.waitForSelector('#account-detail #audit-entries tr:has-text("credits.granted")');
    await snap(page, 'admin-account');

    await page.click('#account-status-button');
    await page.waitForSelector('#account-notice:has-text("Suspended")');
    assert.match((await page.textContent('#account-title')) ?? '', /suspended/);
    assert.equal(await page.textContent('#account-status-button'), 'Reactivate this account');
    const refused = await graphql(t.url, {
      query: '{ getUserByPrivateId { id } }',
      apiKey: user.apiKey,
    });
    assert.deepEqual(errorCodes(refused), ['100101']);
    await page.click('#account-status-button');
    await page.waitForSelector('#account-notice:has-text("Reactivated")');
    const back = await graphql(t.url, {
      query: '{ getUserByPrivateId { id } }',
      apiKey: user.apiKey,
    });
    assert.deepEqual(errorCodes(back), []);
  });

  it('shows an admin failed tasks, models with their backends, the audit log and usage charts', async (test) => {
    const page = await openConsole(browser, t, admin.account.id, test, pageErrors);

    await open(page, 'tasks');
    const row = page.locator(`#failed-tasks tr:has-text("${failedTaskId}")`);
    const text = (await row.textContent()) ?? '';
    assert.match(text, /HTTP 400/);
    assert.match(text, /Invalid value for size/);
    assert.match(text, new RegExp(`${modelId}/openai-images`));
    assert.doesNotMatch(text, new RegExp(providerKey));
    await assertAccessible(page);

    await open(page, 'models');
    const model = await graphql<{ getModel: { backends: Array<{ name: string; state: string }> } }>(
      t.url,
      {
        query: `{ getModel(modelId: "${modelId}") { backends { name state } } }`,
        apiKey: admin.apiKey,
      },
    );
    const backends = model.body.data!.getModel.backends;
    assert.ok(backends.length > 0);
    for (const b of backends) {
      const cell = page.locator(
        `#model-list li[data-model-id="${modelId}"] tr[data-backend="${b.name}"][data-state="${b.state}"]`,
      );
      assert.equal(await cell.count(), 1, `${b.name} is shown ${b.state}`);
    }
    await assertAccessible(page);

    await open(page, 'audit');
    await page.fill('#audit-action', 'account.created');
    const unfiltered = await page.$$eval('#audit-entries tbody tr td:nth-child(3)', (cells) =>
      cells.map((c) => c.textContent),
    );
    assert.ok(
      unfiltered.some((a) => a !== 'account.created'),
      String(unfiltered),
    );
    await page.click('#audit-filter button[type=submit]');
    // The filtered page replaces the whole table (the first page had this account's link too).
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll('#audit-entries tbody tr td:nth-child(3)')];
      return cells.length > 0 && cells.every((c) => c.textContent === 'account.created');
    });
    await page.waitForSelector(`#audit-entries a[href="#/admin/accounts/${user.account.id}"]`);
    await assertAccessible(page);

    await open(page, 'usage');
    await page.waitForSelector('#usage-by-model-chart canvas');
    await page.waitForSelector('#flow-chart canvas');
    await page.waitForSelector('#wait-chart canvas');
    const byModel = await usageOn(submittedOn, t, admin.apiKey, ['DAY', 'MODEL']);
    const shown = (await chartTable(page, 'usage-by-model-chart'))[submittedOn]!;
    for (const r of byModel) assert.equal(shown[r.modelId!], r.submissions, r.modelId!);
    const flow = (await chartTable(page, 'flow-chart'))[submittedOn]!;
    assert.equal(flow.submitted, 2);
    assert.equal(flow.succeeded, 1);
    assert.equal(flow.failed, 1);
    assert.equal(flow['not finished yet'], 0);
    // The queue over the last day: both tasks are done by now, and were submitted within it.
    await page.waitForSelector('#queue-depth-chart canvas');
    const depth = Object.values(await chartTable(page, 'queue-depth-chart'));
    assert.equal(depth.length, 49);
    assert.deepEqual(depth.at(-1), { queued: 0, running: 0 });
    assert.match((await page.textContent('#queue-wait-chart figcaption')) ?? '', /\b2 submitted\b/);
    const byBackend = (await usageOn(submittedOn, t, admin.apiKey, ['DAY', 'BACKEND'])).filter(
      (r) => r.backend !== null,
    );
    if (byBackend.length > 0) {
      const failures = (await chartTable(page, 'failures-by-backend-chart'))[submittedOn]!;
      for (const r of byBackend) assert.equal(failures[r.backend!], r.providerFailures);
    }
    assert.match(
      (await page.textContent('#usage-by-model-chart figcaption')) ?? '',
      new RegExp(`${modelId} 2`),
    );
    await assertAccessible(page);
    await snap(page, 'admin-usage');
  });

  it('shows a non-admin no admin pages, and a chart of their own usage', async (test) => {
    const person = await seedAccount(t.app, { credits: { standard: 30 } });
    const done = await submitOk(t.url, person.apiKey, { modelId, prompt: 'a quiet harbour' });
    assert.equal((await waitForTask(t.url, person.apiKey, done.taskId)).finishCode, FinishCode.Ok);
    const page = await openConsole(browser, t, person.account.id, test, pageErrors);
    await page.waitForSelector('#own-usage-chart canvas');
    assert.equal(await page.isHidden('#console-nav'), true);
    const day = await dayOf(database, done.taskId);
    const mine = await usageOn(day, t, person.apiKey, ['DAY', 'MODEL']);
    const shown = (await chartTable(page, 'own-usage-chart'))[day]!;
    assert.deepEqual(
      shown,
      Object.fromEntries(mine.map((r) => [r.modelId, r.creditsCharged - r.creditsRefunded])),
    );
    assert.ok(shown[modelId]! > 0);
    await assertAccessible(page);

    // An admin address typed by hand shows the person's own console, and nothing was asked.
    await page.evaluate(() => {
      window.location.hash = '#/admin/accounts';
    });
    await page.waitForFunction(() => window.location.hash === '#/admin/accounts');
    assert.equal(await page.isHidden('#admin-page'), true);
    assert.equal(await page.isVisible('#home'), true);
    const refused = await graphql(t.url, {
      query: '{ adminAccounts(first: 1) { nodes { id } } }',
      apiKey: person.apiKey,
    });
    assert.deepEqual(errorCodes(refused), ['110202']);
  });
});
