import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend, perBackend } from '../../helpers/backends.ts';
import { type RunningServer, shortLeaseWorkerEnv, startServer } from '../../helpers/cli.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { gqlOk } from '../../helpers/media.ts';
import { accountWords, failureAudiences } from '../../helpers/remote-engines.ts';
import {
  cancelTask,
  hostedModels,
  imageModel,
  replicateModels,
  tokenEnv,
} from '../../helpers/replicate.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';
import type { Prediction } from '../../helpers/standins/replicate-prediction.ts';
import type { RecordedRequest } from '../../helpers/standins/standin-server.ts';

// How a `replicate` run stops (issue 17), against a protocol stand-in for Replicate's
// predictions API: a cancelled or timed-out task cancels its prediction at Replicate; a task
// whose worker died resumes the prediction it started instead of paying for a second one.

// One stand-in per backend: the two suites run side by side, each taking its predictions in order.
const standinFor = await perBackend(() => ReplicateStandin.start({ models: hostedModels }));

const isCancelOf = (prediction: Prediction) => (r: RecordedRequest) =>
  r.method === 'POST' && r.path === `/v1/predictions/${prediction.id}/cancel`;
const isReadOf = (prediction: Prediction) => (r: RecordedRequest) =>
  r.method === 'GET' && r.path === `/v1/predictions/${prediction.id}`;

describeEachBackend('a replicate run stopped', (backend) => {
  const standin = standinFor(backend);
  let t: TestApp;
  let database: Database;
  const brief = imageModel(standin, 'mdl_rep-brief', {}, { maxRunSeconds: 1 });
  // Its create answer is held (`Prefer: wait`) until the test calls `standin.expireWaits()`.
  const waiting = imageModel(standin, 'mdl_rep-wait', { waitSeconds: 60 });
  const env = {
    MODELS: replicateModels(standin, [brief, waiting]),
    [tokenEnv]: standin.token,
    TASK_LEASE_MS: '1500', // a lease taken over returns to the queue in seconds
  };
  withTestApp(backend, { env }, (started) => {
    ({ t, database } = started);
  });
  let apiKey: string;
  before(async () => {
    ({ apiKey } = await seedAccount(t.app, { credits: { standard: 100 } }));
  });

  /** Submits a held prediction and waits until the engine is polling it. */
  const running = async (modelId: string) => {
    standin.script({ manual: true });
    const next = standin.nextPrediction();
    const { taskId } = await submitOk(t.url, apiKey, { modelId, prompt: 'held' });
    const prediction = await next;
    await standin.http.received(isReadOf(prediction), 'a poll of the prediction');
    return { taskId, prediction };
  };

  /** Submits a held prediction on mdl_rep-wait: resolves once created, its create unanswered. */
  const creating = async () => {
    standin.script({ manual: true });
    const next = standin.nextPrediction();
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_rep-wait', prompt: 'held' });
    return { taskId, prediction: await next };
  };

  it('cancelling the task cancels the prediction at Replicate, credits refunded', async () => {
    const before = await balances(t.url, apiKey);
    const { taskId, prediction } = await running('mdl_rep-image');
    await cancelTask(t.url, apiKey, taskId);
    await standin.http.received(isCancelOf(prediction), 'the cancel URL POSTed');
    await prediction.settled();
    assert.equal(prediction.status, 'canceled');
    assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, FinishCode.Cancelled);
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('a run past maxRunSeconds finishes with code 3 and cancels the prediction', async () => {
    const before = await balances(t.url, apiKey);
    const { taskId, prediction } = await running('mdl_rep-brief');
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.TimedOut);
    await standin.http.received(isCancelOf(prediction), 'the cancel URL POSTed');
    await prediction.settled();
    assert.equal(prediction.status, 'canceled');
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('a prediction Replicate aborted at its Cancel-After deadline finishes with code 1, refunded', async () => {
    const before = await balances(t.url, apiKey);
    const { taskId, prediction } = await running('mdl_rep-image');
    prediction.reachDeadline(); // still queued at Replicate: `aborted`, a status its SDKs miss
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(prediction.status, 'aborted');
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.interrupted),
      /was aborted before it ran/,
    );
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('a task cancelled while its create is in flight cancels the prediction that create made', async () => {
    const before = await balances(t.url, apiKey);
    const { taskId, prediction } = await creating();
    await cancelTask(t.url, apiKey, taskId);
    assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, FinishCode.Cancelled);
    standin.expireWaits(); // Replicate answers the create only now, naming the prediction
    await standin.http.received(isCancelOf(prediction), 'the cancel URL POSTed');
    await prediction.settled();
    assert.equal(prediction.status, 'canceled');
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('a prediction whose id cannot be saved (lease lost during the create) is cancelled', async () => {
    const before = (await balances(t.url, apiKey)).standard!;
    const { taskId, prediction } = await creating();
    const next = standin.nextPrediction(); // the next attempt's
    await database.db
      .updateTable('tasks')
      .set({ lease_token: 'taken-over', lease_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', taskId)
      .execute();
    standin.expireWaits(); // the create answers; the checkpoint write is refused
    await standin.http.received(isCancelOf(prediction), 'the cancel URL of the unsaved one');
    await prediction.settled();
    assert.equal(prediction.status, 'canceled', 'not left running beside the next attempt');
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    assert.equal((await next).status, 'succeeded', 'the next attempt made its own');
    assert.equal((await balances(t.url, apiKey)).standard, before - 3, 'charged once');
  });

  it('a lease lost to another worker leaves the prediction running; the next attempt resumes it', async () => {
    const before = (await balances(t.url, apiKey)).standard!;
    const { taskId, prediction } = await running('mdl_rep-image');
    // Another worker takes the task over: its lease token changes, and that lease expires.
    await database.db
      .updateTable('tasks')
      .set({ lease_token: 'taken-over', lease_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', taskId)
      .execute();
    await t.logged((e) => e.msg === 'task started' && e.taskId === taskId && e.attempt === 2);
    const seen = new Set(standin.http.requests);
    await standin.http.received(
      (r) => isReadOf(prediction)(r) && !seen.has(r),
      'a poll of the same prediction by the second attempt',
    );
    prediction.pace.release();
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    assert.equal(prediction.status, 'succeeded');
    assert.deepEqual(standin.http.matching(isCancelOf(prediction)), [], 'never cancelled');
    const created = standin.http.matching(
      (r) =>
        r.method === 'POST' && (r.json as { input?: unknown } | undefined)?.input !== undefined,
    );
    assert.equal(created.filter((r) => !seen.has(r)).length, 0, 'no second prediction');
    assert.equal((await balances(t.url, apiKey)).standard, before - 3, 'charged once');
  });
});

it('a server killed mid-run: the restarted one resumes the same prediction, charged once', async (t) => {
  const standin = standinFor('pglite'); // after the suites above, so nothing shares it
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-replicate-'));
  const env = {
    ...shortLeaseWorkerEnv(1),
    MODELS: replicateModels(standin),
    [tokenEnv]: standin.token,
    DATA_DIR: dataDir,
  };
  const servers: RunningServer[] = [];
  t.after(async () => {
    for (const server of servers) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const first = await startServer(env);
  servers.push(first);
  const apiKey = /svc_[A-Za-z0-9]{32}/.exec(first.stderr())![0];
  const creates = () => standin.http.matching((r) => r.method === 'POST' && r.json !== undefined);
  const createdBefore = creates().length;

  standin.script({ manual: true });
  const next = standin.nextPrediction();
  const { contentId, taskId } = await submitOk(first.url, apiKey, {
    modelId: 'mdl_rep-image',
    prompt: 'survive',
  });
  const prediction = await next;
  await standin.http.received(isReadOf(prediction), 'a poll by the first server');
  await first.kill();
  const seen = new Set(standin.http.requests);

  const second = await startServer(env);
  servers.push(second);
  await standin.http.received(
    (r) => isReadOf(prediction)(r) && !seen.has(r),
    'a poll of the same prediction by the restarted server',
  );
  prediction.pace.release();
  const task = await waitForTask(second.url, apiKey, taskId, undefined, 30_000);
  assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
  assert.equal(creates().length - createdBefore, 1, 'one prediction created, not two');
  assert.equal(prediction.status, 'succeeded', 'never cancelled by the dying worker');
  const { getContent } = await gqlOk<{
    getContent: { media: unknown[]; creditsCharged: number; creditsRefunded: number };
  }>(
    second.url,
    apiKey,
    'query C($id: ID!) { getContent(contentId: $id) { media { mediaId } creditsCharged creditsRefunded } }',
    { id: contentId },
  );
  assert.deepEqual(
    [getContent.media.length, getContent.creditsCharged, getContent.creditsRefunded],
    [1, 3, 0],
    'one result, charged once',
  );
});
