import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APIUserAbortError } from 'openai';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import {
  balances,
  countContents,
  fakeModel,
  getTask,
  waitForTask,
} from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { apiError, errorFields, openaiClient } from '../../helpers/openai.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Runs until cancelled: a wait of any length runs out first.
const endless = fakeModel('mdl_test-endless', { durationMs: 3_600_000 });
const slow = fakeModel('mdl_test-slow', { durationMs: 3_000 });

/** How many image requests reached the server so far (the SDK's retries included). */
function imageRequests(t: TestApp): number {
  return t
    .logs()
    .split('\n')
    .filter((line) => line.includes('"incoming request"') && line.includes('/v1/images/')).length;
}

describe('/v1: a wait that runs out', () => {
  let database: Database;
  let t: TestApp;
  withTestApp(
    'pglite',
    {
      env: {
        MODELS: JSON.stringify([endless]),
        OPENAI_WAIT_SECONDS: '1',
        SHUTDOWN_DRAIN_MS: '0',
      },
    },
    (started) => {
      ({ database, t } = started);
    },
  );

  it('is 504 (160001) naming the generation, which goes on; SDK retries find it, charge nothing', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 10 } });
    const client = openaiClient(t.url, apiKey, { maxRetries: 2 });
    const params = { model: 'mdl_test-endless', prompt: 'a long one' };

    const before = imageRequests(t);
    const keyed = await apiError(
      client.images.generate(params, { headers: { 'Idempotency-Key': 'long-1' } }),
    );
    assert.deepEqual([keyed.status, keyed.code], [504, '160001']);
    const { contentId, taskId } = errorFields(keyed);
    assert.equal(keyed.headers?.get('atelier-content-id'), contentId);
    assert.equal(keyed.headers?.get('atelier-task-id'), taskId);
    assert.match(keyed.message, new RegExp(`${contentId}.*${taskId}`));
    // The SDK retried twice (the answer said it may: same key, same generation), charged once.
    assert.equal(keyed.headers?.get('x-should-retry'), 'true');
    assert.equal(imageRequests(t) - before, 3);
    assert.equal(await countContents(database, account.id), 1);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 7 });
    assert.notEqual((await getTask(t.url, apiKey, String(taskId))).status, 'finished');

    // Without a key a retry would be a second generation: the answer forbids it.
    const unkeyed = await apiError(client.images.generate(params));
    assert.equal(unkeyed.headers?.get('x-should-retry'), 'false');
    assert.equal(imageRequests(t) - before, 4);
    assert.equal(await countContents(database, account.id), 2);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 4 });
  });
});

describe('/v1: a client that gives up', () => {
  let t: TestApp;
  withTestApp('pglite', { env: { MODELS: JSON.stringify([slow]) } }, (started) => {
    ({ t } = started);
  });

  it('loses nothing: the generation finishes and is in its history', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const client = openaiClient(t.url, apiKey);
    const giveUp = new AbortController();
    const call = client.images.generate(
      { model: 'mdl_test-slow', prompt: 'worth the wait' },
      { signal: giveUp.signal },
    );
    const started = await t.logged(
      (entry) => entry.msg === 'task started' && entry.modelId === 'mdl_test-slow',
    );
    giveUp.abort();
    await assert.rejects(call, APIUserAbortError);
    // The server stops waiting for it, and only that.
    await t.logged(
      (entry) =>
        entry.msg === 'client gone before its generation finished; the generation goes on' &&
        entry.contentId === started.contentId,
    );

    const history = await graphql<{
      listContents: { nodes: Array<{ contentId: string; task: { taskId: string } }> };
    }>(t.url, {
      query: '{ listContents { nodes { contentId task { taskId } } } }',
      apiKey,
    });
    const [content] = history.body.data!.listContents.nodes;
    assert.equal(content?.contentId, started.contentId);
    const task = await waitForTask(t.url, apiKey, content!.task.taskId);
    assert.equal(task.finishCode, FinishCode.Ok);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 7 });
    assert.ok(!t.logs().includes('unhandled error'), 'the abandoned request logged no error');
  });
});
