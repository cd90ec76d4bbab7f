import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend, perBackend } from '../../helpers/backends.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { download, gqlOk } from '../../helpers/media.ts';
import { accountWords, failureAudiences } from '../../helpers/remote-engines.ts';
import { hostedModels, replicateModels, tokenEnv } from '../../helpers/replicate.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';
import { nsfwError } from '../../helpers/standins/replicate-prediction.ts';
import type { RecordedRequest } from '../../helpers/standins/standin-server.ts';

// The `replicate` engine (issue 17) through the real service, against a protocol stand-in for
// Replicate's predictions API (test/helpers/standins/replicate.ts, after
// ../shared/protocols/replicate.md): images made, progress, failures and refusals refunded,
// throttling waited out, and the API token kept out of every message and log line.

// One stand-in per backend: the two suites run side by side, each taking its predictions in order.
const standinFor = await perBackend(() => ReplicateStandin.start({ models: hostedModels }));

const mediaQuery = `query C($id: ID!) { getContent(contentId: $id) {
  creditsCharged creditsRefunded media { mediaId mimeType width height } } }`;
interface ContentMedia {
  getContent: {
    creditsCharged: number;
    creditsRefunded: number;
    media: { mediaId: string; mimeType: string; width: number; height: number }[];
  };
}

describeEachBackend('the replicate engine against a Replicate protocol stand-in', (backend) => {
  const standin = standinFor(backend);
  let database: Database;
  let t: TestApp;
  const env = { MODELS: replicateModels(standin), [tokenEnv]: standin.token };
  withTestApp(backend, { env }, (started) => {
    ({ database, t } = started);
  });
  let apiKey: string;
  before(async () => {
    ({ apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } }));
  });
  const finished = async (taskId: string) => waitForTask(t.url, apiKey, taskId);
  /** Submits an image; every submission here makes one prediction, taken in order. */
  const start = async (input: Record<string, unknown>) => {
    const prediction = standin.nextPrediction();
    prediction.catch(() => {}); // awaited by the tests that look at it
    const ids = await submitOk(t.url, apiKey, { modelId: 'mdl_rep-image', ...input });
    return { ...ids, prediction };
  };

  it('makes the images: the model input from the template, the bytes stored, charged once', async () => {
    const before = (await balances(t.url, apiKey)).standard!;
    const started = await start({ prompt: 'a lighthouse at dawn', count: 2, seed: 7 });
    const { contentId, taskId } = started;
    const prediction = await started.prediction;
    const task = await finished(taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');

    // This backend's run is the latest: the task has finished, so its create came.
    const create = standin.http
      .matching(
        (r) =>
          r.method === 'POST' &&
          (r.json as { input?: { seed?: number } } | undefined)?.input?.seed === 7,
      )
      .at(-1)!;
    assert.equal(create.path, '/v1/models/black-forest-labs/flux-schnell/predictions');
    assert.equal(create.headers.authorization, `Bearer ${standin.token}`);
    // No cancelAfterSeconds: the image default (5 min + 1), so Replicate ends it by itself.
    assert.equal(create.headers['cancel-after'], '360s');
    assert.deepEqual(create.json, {
      input: {
        prompt: 'a lighthouse at dawn',
        width: 64,
        height: 48,
        num_outputs: 2,
        seed: 7,
        output_format: 'png',
      },
    });
    const { getContent } = await gqlOk<ContentMedia>(t.url, apiKey, mediaQuery, { id: contentId });
    assert.equal(getContent.media.length, 2);
    const made = [...prediction.files.values()];
    for (const [index, media] of getContent.media.entries()) {
      assert.deepEqual([media.mimeType, media.width, media.height], ['image/png', 64, 48]);
      const bytes = await download(t.url, apiKey, media.mediaId);
      assert.ok(bytes.equals(made[index]!.bytes), 'the bytes Replicate made');
    }
    assert.deepEqual([getContent.creditsCharged, getContent.creditsRefunded], [6, 0]);
    assert.equal((await balances(t.url, apiKey)).standard, before - 6);
  });

  it('reports the progress the prediction logs print', async () => {
    standin.script({ manual: true, steps: 4 });
    const started = await start({ prompt: 'slow' });
    const { taskId } = started;
    const prediction = await started.prediction;
    prediction.pace.advance(3); // start, then 25% and 50% printed
    const halfway = await waitForTask(t.url, apiKey, taskId, (s) => (s.progress ?? 0) >= 0.5);
    assert.equal(halfway.status, 'running');
    assert.ok(halfway.progress! < 0.95, `progress ${halfway.progress} follows the logs`);
    prediction.pace.release();
    assert.equal((await finished(taskId)).finishCode, FinishCode.Ok);
  });

  it('a failed prediction finishes with code 1, its error logged, the credits refunded', async () => {
    const before = await balances(t.url, apiKey);
    standin.script({ fail: 'CUDA out of memory. Tried to allocate 2.00 GiB' });
    const { taskId } = await start({ prompt: 'big' });
    const task = await finished(taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(await failureAudiences(t, task, accountWords.failed), /CUDA out of memory/);
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('a content-policy refusal finishes with code 4 (rejected input), refunded', async () => {
    const before = await balances(t.url, apiKey);
    standin.script({ fail: nsfwError });
    const { taskId } = await start({ prompt: 'no' });
    const task = await finished(taskId);
    assert.equal(task.finishCode, FinishCode.RejectedInput);
    assert.match(await failureAudiences(t, task, accountWords.refused), /NSFW content detected/);
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('a prediction that succeeds with no file (every result filtered) is a failure, refunded', async () => {
    const before = await balances(t.url, apiKey);
    standin.script({ form: 'empty' });
    const { taskId } = await start({ prompt: 'x' });
    const task = await finished(taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(await failureAudiences(t, task, accountWords.unusable), /without an output file/);
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('waits out a 429 for the Retry-After it names, then creates one prediction', async () => {
    const seen = new Set(standin.http.requests);
    const isNewCreate = (r: RecordedRequest) => r.method === 'POST' && !seen.has(r);
    const predictions = standin.predictions.size;
    standin.throttle(1, 1);
    const { taskId } = await start({ prompt: 'busy' });
    const throttled = await standin.http.received(isNewCreate, 'the throttled create');
    const throttledAt = performance.now();
    seen.add(throttled);
    await standin.http.received(isNewCreate, 'the create after Retry-After');
    const waitedMs = performance.now() - throttledAt;
    assert.ok(waitedMs >= 900, `asked to wait 1 s, waited ${Math.round(waitedMs)} ms`);
    assert.equal((await finished(taskId)).finishCode, FinishCode.Ok);
    assert.equal(standin.predictions.size - predictions, 1, 'one prediction made');
  });

  it('never sends a create again after a 5xx: it may have made a prediction; code 1, refunded', async () => {
    const before = await balances(t.url, apiKey);
    const seen = new Set(standin.http.requests);
    const isNewCreate = (r: RecordedRequest) =>
      r.method === 'POST' && r.path.endsWith('/predictions') && !seen.has(r);
    standin.http.failNext((r) => r.method === 'POST' && r.path.endsWith('/predictions'), 1, {
      status: 503,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Service Unavailable', detail: 'Try again later.' }),
    });
    // No prediction is made, so not `start`, which waits for one.
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_rep-image', prompt: 'once' });
    const task = await finished(taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure, task.finishMessage ?? '');
    assert.match(
      await failureAudiences(t, task, accountWords.failed),
      /HTTP 503: Service Unavailable: Try again later/,
    );
    assert.equal(standin.http.matching(isNewCreate).length, 1, 'one create sent');
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('never shows the API token: not in a finish message, not in a log line', async () => {
    standin.script({
      fail: `Invalid upstream credentials ${standin.token} (Bearer ${standin.token})`,
    });
    const { taskId } = await start({ prompt: 'leak' });
    const task = await finished(taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.failed),
      /Invalid upstream credentials \[redacted\]/,
    );
    assert.ok(!t.logs().includes(standin.token), 'the token is in no log line');
  });

  it('masks a token Replicate echoes only in part', async () => {
    const part = `${standin.token.slice(0, 9)}*******`; // r8_standi*******
    standin.script({ fail: `Token ${part} is not valid for this model` });
    const { taskId } = await start({ prompt: 'partial leak' });
    const task = await finished(taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.failed),
      /Token \[redacted\] is not valid/,
    );
    assert.ok(!t.logs().includes(standin.token.slice(0, 9)), 'nor in a log line');
  });

  it('the five invariants held', async () => {
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});
