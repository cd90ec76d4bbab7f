import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend, perBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { hostedModels, imageModel, replicateModels, tokenEnv } from '../../helpers/replicate.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';
import type { Prediction } from '../../helpers/standins/replicate-prediction.ts';
import type { RecordedRequest } from '../../helpers/standins/standin-server.ts';

// Review 17, item 4: a worker cut off from the database cannot renew its lease. Once the lease
// has expired another worker may claim the task and resume its remote job, so the cut-off run
// is lost: at its deadline it must not cancel that job. Played with a protocol stand-in for
// Replicate's predictions API and a database every query of which fails while it is cut off.

// One stand-in per backend: the two suites run side by side, each taking its predictions in order.
const standinFor = await perBackend(() => ReplicateStandin.start({ models: hostedModels }));

const isCancelOf = (prediction: Prediction) => (r: RecordedRequest) =>
  r.method === 'POST' && r.path === `/v1/predictions/${prediction.id}/cancel`;
const isReadOf = (prediction: Prediction) => (r: RecordedRequest) =>
  r.method === 'GET' && r.path === `/v1/predictions/${prediction.id}`;

describeEachBackend('a worker whose lease renewals fail', (backend) => {
  const standin = standinFor(backend);
  let database: Database;
  let t: TestApp;
  let cutOff = false;
  const failWhileCutOff: KyselyPlugin = {
    transformQuery: (args) => {
      if (cutOff) throw new Error('database unreachable (cut off by the test)');
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  // The run's deadline (5 s) comes well after the lease (1 s) has expired unrenewed.
  const brief = imageModel(standin, 'mdl_rep-brief', {}, { maxRunSeconds: 5 });
  before(async () => {
    database = await createTestDatabase(backend);
    const cutOffable: Database = {
      db: database.db.withPlugin(failWhileCutOff),
      backend: database.backend,
      connectionUrl: database.connectionUrl,
      ping: () => database.ping(),
      close: () => database.close(),
    };
    t = await startTestApp(cutOffable, {
      env: {
        MODELS: replicateModels(standin, [brief]),
        [tokenEnv]: standin.token,
        TASK_LEASE_MS: '1000',
      },
    });
  });
  after(async () => {
    cutOff = false;
    await t?.close();
    await database?.close();
  });

  it('is lost once its lease expires: the prediction is not cancelled and the next attempt resumes it', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const before = (await balances(t.url, apiKey)).standard!;
    standin.script({ manual: true });
    const next = standin.nextPrediction();
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_rep-brief', prompt: 'cut' });
    const prediction = await next;
    await standin.http.received(isReadOf(prediction), 'a poll of the prediction');

    cutOff = true;
    const ended = await t.logged((e) => e.msg === 'engine run ended' && e.taskId === taskId);
    assert.equal(ended.stopped, 'lost', 'stopped as lost, not at its deadline');
    assert.deepEqual(standin.http.matching(isCancelOf(prediction)), [], 'not cancelled');

    cutOff = false;
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
    assert.equal((await balances(t.url, apiKey)).standard, before - 3, 'charged once');
  });
});
