import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import {
  type RunningServer,
  shortLeaseWorkerEnv,
  startServer,
  startWorker,
} from '../../helpers/cli.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { seedAccount } from '../../helpers/seed.ts';

const workerEnv = shortLeaseWorkerEnv(1);

describe('a worker killed mid-task [postgres: separate worker processes]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let database: Database;
  let api: TestApp;
  const workers: RunningServer[] = [];
  before(async () => {
    database = await createTestDatabase('postgres');
    api = await startTestApp(database, { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } });
  });
  after(async () => {
    for (const worker of workers) await worker.stop();
    await api.close();
    await database.close();
  });

  const worker = async (env: Record<string, string> = {}) => {
    const started = await startWorker({
      ...workerEnv,
      DATABASE_URL: database.connectionUrl!,
      DATA_DIR: api.app.config.dataDir,
      ...env,
    });
    workers.push(started);
    return started;
  };
  const attempts = async (taskId: string) =>
    (
      await database.db
        .selectFrom('tasks')
        .select('attempts')
        .where('id', '=', taskId)
        .executeTakeFirstOrThrow()
    ).attempts;

  it('is recovered by another worker and finishes exactly once, charged once', async () => {
    const { apiKey } = await seedAccount(api.app, { credits: { standard: 10 } });
    const first = await worker();
    const { contentId, taskId } = await submitOk(api.url, apiKey, {
      modelId: 'mdl_test-slow',
      prompt: 'survive',
    });
    await waitForTask(
      api.url,
      apiKey,
      taskId,
      (t) => t.status === 'running' && (t.progress ?? 0) > 0,
    );
    await first.kill();

    await worker();
    const task = await waitForTask(api.url, apiKey, taskId, undefined, 30_000);
    assert.equal(task.finishCode, FinishCode.Ok);
    assert.equal(await attempts(taskId), 2, 'the second worker took over the expired lease');
    const media = await database.db
      .selectFrom('media')
      .select('id')
      .where('content_id', '=', contentId)
      .execute();
    assert.equal(media.length, 1, 'one result, not two');
    assert.deepEqual(
      await balances(api.url, apiKey),
      { standard: 7 },
      'charged once, not refunded',
    );
  });

  it('with no attempts left, is finished as lost (code 5) and refunded exactly once', async (t) => {
    const { apiKey } = await seedAccount(api.app, { credits: { standard: 10 } });
    for (const w of workers.splice(0)) await w.stop();
    const doomed = await worker();
    // Submitted through an API node configured with TASK_MAX_ATTEMPTS=1 (same database).
    const strictApi = await startTestApp(database, {
      env: { MODELS: testModels, WORKER_CONCURRENCY: '0', TASK_MAX_ATTEMPTS: '1' },
    });
    t.after(() => strictApi.close());
    const { contentId, taskId } = await submitOk(strictApi.url, apiKey, {
      modelId: 'mdl_test-slow',
      prompt: 'doomed',
    });
    await waitForTask(api.url, apiKey, taskId, (t) => t.status === 'running');
    await doomed.kill();

    await worker();
    const task = await waitForTask(api.url, apiKey, taskId, undefined, 30_000);
    assert.equal(task.finishCode, FinishCode.Lost);
    assert.deepEqual(await balances(api.url, apiKey), { standard: 10 });
    const refunds = await database.db
      .selectFrom('credit_ledger')
      .select('delta')
      .where('reference', '=', contentId)
      .where('reason', '=', 'refund')
      .execute();
    assert.deepEqual(
      refunds.map((r) => r.delta),
      [3],
    );
  });

  it('a worker whose lease was taken over cannot finish the task (fencing)', async () => {
    const { apiKey } = await seedAccount(api.app, { credits: { standard: 10 } });
    for (const w of workers.splice(0)) await w.stop();
    const slow = await worker();
    const { contentId, taskId } = await submitOk(api.url, apiKey, {
      modelId: 'mdl_test-slow',
      prompt: 'fenced',
    });
    await waitForTask(api.url, apiKey, taskId, (t) => t.status === 'running');
    // Freeze the worker (SIGSTOP): its lease expires while it is still "working".
    slow.child.kill('SIGSTOP');
    await worker();
    const done = await waitForTask(api.url, apiKey, taskId, undefined, 30_000);
    assert.equal(done.finishCode, FinishCode.Ok);
    slow.child.kill('SIGCONT'); // it wakes up, finishes its engine run, and is refused
    // Stopped, it drains (SHUTDOWN_DRAIN_MS, 15 s by default): it exits once that run is over,
    // so whatever the stale run would write is written by then.
    assert.equal(await slow.stop(), 0, slow.stderr());
    const media = await database.db
      .selectFrom('media')
      .select('id')
      .where('content_id', '=', contentId)
      .execute();
    assert.equal(media.length, 1, 'the stale worker added nothing');
    const content = await graphql<{ getContent: { creditsRefunded: number } }>(api.url, {
      query: 'query C($id: ID!) { getContent(contentId: $id) { creditsRefunded } }',
      variables: { id: contentId },
      apiKey,
    });
    assert.equal(content.body.data?.getContent.creditsRefunded, 0);
  });

  it('the five invariants held over every scenario above', async () => {
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});

describe('a worker stopped with SIGTERM [postgres]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let database: Database;
  let api: TestApp;
  before(async () => {
    database = await createTestDatabase('postgres');
    api = await startTestApp(database, { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } });
  });
  after(async () => {
    await api.close();
    await database.close();
  });
  const start = (drainMs: string) =>
    startWorker({
      ...workerEnv,
      SHUTDOWN_DRAIN_MS: drainMs,
      DATABASE_URL: database.connectionUrl!,
      DATA_DIR: api.app.config.dataDir,
    });

  it('stops claiming and lets its running task finish before exiting', async () => {
    const { apiKey } = await seedAccount(api.app, { credits: { standard: 10 } });
    const w = await start('20000');
    const running = await submitOk(api.url, apiKey, { modelId: 'mdl_test-slow', prompt: 'drain' });
    await waitForTask(api.url, apiKey, running.taskId, (t) => t.status === 'running');
    const exited = w.stop();
    const waiting = await submitOk(api.url, apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'not claimed',
    });
    assert.equal(await exited, 0);
    assert.equal(
      (await waitForTask(api.url, apiKey, running.taskId, undefined, 1)).finishCode,
      0,
      'finished before exit',
    );
    assert.equal(
      (await waitForTask(api.url, apiKey, waiting.taskId, () => true)).status,
      'queued',
      'nothing new claimed',
    );
  });

  it('hands a task it cannot finish in time back to the queue without spending an attempt', async () => {
    const { apiKey } = await seedAccount(api.app, { credits: { standard: 10 } });
    const w = await start('0');
    const { taskId } = await submitOk(api.url, apiKey, {
      modelId: 'mdl_test-slow',
      prompt: 'hand back',
    });
    await waitForTask(api.url, apiKey, taskId, (t) => t.status === 'running');
    assert.equal(await w.stop(), 0);
    const row = await database.db
      .selectFrom('tasks')
      .select(['status', 'attempts'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'queued', attempts: 0 });
  });
});

describe('a server killed mid-task [pglite: in-process workers]', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-crash-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('finishes the task after a restart, exactly once', async () => {
    const env = { ...workerEnv, DATA_DIR: dataDir };
    const first = await startServer(env);
    let second: RunningServer | undefined;
    try {
      const apiKey = /svc_[A-Za-z0-9]{32}/.exec(first.stderr())![0];
      const { contentId, taskId } = await submitOk(first.url, apiKey, {
        modelId: 'mdl_test-slow',
        prompt: 'crash',
      });
      await waitForTask(
        first.url,
        apiKey,
        taskId,
        (t) => t.status === 'running' && (t.progress ?? 0) > 0,
      );
      await first.kill();

      second = await startServer(env);
      const task = await waitForTask(second.url, apiKey, taskId, undefined, 30_000);
      assert.equal(task.finishCode, FinishCode.Ok);
      const content = await graphql<{
        getContent: { media: unknown[]; creditsCharged: number; creditsRefunded: number };
      }>(second.url, {
        query:
          'query C($id: ID!) { getContent(contentId: $id) { media { mediaId } creditsCharged creditsRefunded } }',
        variables: { id: contentId },
        apiKey,
      });
      const { media, creditsCharged, creditsRefunded } = content.body.data!.getContent;
      assert.deepEqual(
        [media.length, creditsCharged, creditsRefunded],
        [1, 3, 0],
        'one result, charged once',
      );
      assert.deepEqual(await balances(second.url, apiKey), { standard: 997 });
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});
