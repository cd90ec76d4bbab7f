import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser, WebSocketRoute } from 'playwright-core';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { launchChromium, withoutBrowser } from '../../helpers/browser.ts';
import { assertAccessible, openConsole } from '../../helpers/console-page.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { waitForTask } from '../../helpers/generation.ts';
import { gqlOk } from '../../helpers/media.ts';
import { imageModel, tokenEnv } from '../../helpers/replicate.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';

// Issue 33: live progress in the console that resumes after a disconnect, in Chromium. A run
// is held at a step of a Replicate stand-in (test/helpers/standins/pace.ts); the page's
// WebSocket goes through a Playwright route, which drops it mid-run and lets the second one
// through only when the test says so. Meanwhile the console says "Reconnecting…"; then it
// subscribes again after the last cursor it received, gets what it missed, and the progress
// goes on to "Finished with code 0".

const standin = await ReplicateStandin.start({
  models: [{ name: 'black-forest-labs/flux-schnell', required: ['prompt'] }],
});
after(() => standin.close());

describe('live progress in the web console across a dropped connection (issue 33)', {
  skip: withoutBrowser,
}, () => {
  let browser: Browser;
  let database: Database;
  let t: TestApp;
  const pageErrors: string[] = [];
  before(async () => {
    browser = await launchChromium();
    database = await createTestDatabase('pglite');
    const models = JSON.stringify([imageModel(standin, 'mdl_rep-image', { pollMs: 20 })]);
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

  it('live progress resumes after the cursor when the connection drops mid-run', async (test) => {
    const seeded = await seedAccount(t.app, { credits: { standard: 100 } });
    // Every socket of the page goes through this route: the first is dropped mid-run, and the
    // second reaches the server only when the test lets it, so the drop is seen for sure.
    const sockets: { page: WebSocketRoute; sent: string[]; received: string[] }[] = [];
    let letThrough: () => void = () => {};
    const reconnect = new Promise<void>((resolve) => {
      letThrough = resolve;
    });
    const frames = new FrameWaiter();
    const page = await openConsole(
      browser,
      t,
      seeded.account.id,
      test,
      pageErrors,
      undefined,
      async (page) => {
        await page.routeWebSocket(/\/graphql$/, (ws) => {
          const socket = { page: ws, sent: [] as string[], received: [] as string[] };
          sockets.push(socket);
          const waiting: string[] = [];
          let server: WebSocketRoute | undefined;
          ws.onMessage((message) => {
            socket.sent.push(String(message));
            frames.changed();
            if (server === undefined) waiting.push(String(message));
            else server.send(message);
          });
          const connect = () => {
            server = ws.connectToServer();
            server.onMessage((message) => {
              socket.received.push(String(message));
              frames.changed();
              ws.send(message);
            });
            for (const message of waiting.splice(0)) server.send(message);
          };
          if (sockets.length === 1) connect();
          else void reconnect.then(connect);
        });
      },
    );
    standin.script({ manual: true, steps: 4 });
    await page.selectOption('#model', 'mdl_rep-image');
    await page.fill('#generate-form textarea[name=prompt]', 'a held lighthouse');
    await page.waitForFunction(() =>
      /^Costs/.test(document.getElementById('estimate')?.textContent ?? ''),
    );
    await page.click('#generate-form button[type=submit]');
    // Asked for only now: its deadline covers the run being created, not the browser's steps.
    const prediction = await standin.nextPrediction();
    prediction.pace.advance(2); // started, and 25 % printed
    await page.waitForSelector('#task-status:has-text("Running… 25 %")');
    const cursors = () =>
      sockets[0]!.received
        .map((m) => JSON.parse(m))
        .filter((m) => m.type === 'next' && m.payload.data?.taskUpdated)
        .map((m) => m.payload.data.taskUpdated.cursor as string);
    const lastSeen = cursors().at(-1);
    assert.ok(lastSeen, 'updates carry a cursor');

    // The connection drops, as a proxy's restart would drop it.
    await sockets[0]!.page.close({ code: 1001, reason: 'Going away' });
    await page.waitForSelector('#task-status:has-text("Reconnecting…")');
    // Meanwhile the run goes on: 50 % is written while nobody listens.
    prediction.pace.advance(1);
    await waitForTask(
      t.url,
      seeded.apiKey,
      await newestTaskId(t, seeded),
      (s) => (s.progress ?? 0) >= 0.5,
    );
    letThrough();
    // The new connection subscribes after the last cursor seen, and gets what it missed.
    // (The gallery's own subscription, myTaskUpdates, goes again too.)
    const followed = (m: string) => {
      const message = JSON.parse(m);
      return message.type === 'subscribe' && message.payload.query.includes('taskUpdated(');
    };
    await frames.until(() => sockets[1]?.sent.some(followed));
    const resubscribe = JSON.parse(sockets[1]!.sent.find(followed)!);
    assert.equal(resubscribe.payload.variables.after, lastSeen);
    await page.waitForSelector('#task-status:has-text("Running… 50 %")');
    assert.equal(await page.getAttribute('#progress', 'hidden'), null, 'the bar still shows');
    prediction.pace.release();
    await page.waitForSelector('#task-status[data-finish-code="0"]');
    assert.equal(await page.textContent('#task-status'), 'Finished with code 0.');
    await page.waitForSelector('#result article.content img');
    await assertAccessible(page);
  });
});

/** The task the Generate section submitted: the account's newest. */
async function newestTaskId(t: TestApp, seeded: SeededAccount): Promise<string> {
  const { listContents } = await gqlOk<{
    listContents: { nodes: { task: { taskId: string } }[] };
  }>(t.url, seeded.apiKey, '{ listContents(first: 1) { nodes { task { taskId } } } }');
  return listContents.nodes[0]!.task.taskId;
}

/** Resolves `until(holds)` when a recorded frame makes `holds` true (checked at each frame). */
class FrameWaiter {
  #waiting = new Set<() => void>();

  changed(): void {
    for (const check of [...this.#waiting]) check();
  }

  until(holds: () => boolean | undefined): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!holds()) return;
        this.#waiting.delete(check);
        resolve();
      };
      this.#waiting.add(check);
      check();
    });
  }
}
