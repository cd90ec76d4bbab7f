import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { checkpoint, promptOf } from '../../helpers/comfyui-models.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { attemptsOf, comfyBackend, fleetModel } from '../../helpers/fleets.ts';
import { balances, generateImage, submitOk, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { drained, invariantViolations } from '../../helpers/invariants.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ComfyStandin } from '../../helpers/standins/comfyui.ts';

// Issue 31 §4–5: what a pool's health means to a caller. A failure of the work itself is the
// task's, on the backend it ran on: it never fails over. A pool whose every backend is out reads
// `maintenance` and refuses submissions as any model in maintenance does, charging nothing,
// until a probe brings a backend back. Two ComfyUI boxes (protocol stand-ins), probed every
// second.

describeEachBackend('a pool’s health as callers see it (issue 31)', (backend) => {
  let boxes: ComfyStandin[];
  let database: Database;
  let t: TestApp;
  const modelId = 'mdl_pair';
  const boxIds = ['box-1', 'box-2'].map((name) => `${modelId}/${name}`);

  before(async () => {
    boxes = await Promise.all([1, 2].map(() => ComfyStandin.start({ checkpoints: [checkpoint] })));
    database = await createTestDatabase(backend);
    const health = { failuresBeforeCooldown: 1, cooldownSeconds: 1, probeSeconds: 1 };
    const model = fleetModel(
      modelId,
      boxes.map((box, i) => comfyBackend(`box-${i + 1}`, box, { health })),
    );
    t = await startTestApp(database, {
      env: { MODELS: JSON.stringify([model]), ACCOUNT_MAX_RUNNING_TASKS: '0' },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    for (const box of boxes ?? []) await box.close();
  });

  const statusOfModel = async () => {
    const { body } = await graphql<{ getModel: { status: string } }>(t.url, {
      query: `{ getModel(modelId: "${modelId}") { status } }`,
    });
    return body.data?.getModel.status;
  };
  /** The catalogue follows a change announced to every node: read until it shows (10 s bound). */
  const modelBecomes = async (status: string) => {
    for (const deadline = Date.now() + 10_000; (await statusOfModel()) !== status; ) {
      assert.ok(Date.now() < deadline, `the model never read ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('a failure of the work itself finishes the task where it ran: no failover, refunded, the box still in rotation', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const oom = {
      fail: { message: 'CUDA out of memory', exceptionType: 'torch.OutOfMemoryError' },
    };
    // Whichever box takes it fails it (the other's script is never used: both are replaced below).
    for (const box of boxes) box.script(oom);
    const { taskId } = await submitOk(t.url, apiKey, { modelId, prompt: 'too big' });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.deepEqual(
      (await attemptsOf(database.db, taskId)).map((a) => a.outcome),
      ['failed'],
      'one run, on one box',
    );
    assert.equal(
      boxes.reduce((runs, box) => runs + box.http.matching((r) => r.path === '/prompt').length, 0),
      1,
      'the other box was never asked',
    );
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
    const states = await database.db.selectFrom('backends').select(['id', 'state']).execute();
    assert.ok(
      states.every((b) => b.state === 'up'),
      JSON.stringify(states),
    );
  });

  it('every box out: the model reads maintenance and refuses submissions, charging nothing; a box back, it serves again', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    assert.equal(await statusOfModel(), 'ready');
    const ports = boxes.map((box) => Number(new URL(box.url).port));
    for (const box of boxes) await box.kill();
    for (const id of boxIds) {
      await t.logged(
        (e) => e.msg === 'backend out of rotation: failures in a row' && e.backend === id,
      );
    }
    // Every node hears of it (the broadcast), and its catalogue follows.
    await modelBecomes('maintenance');
    const refused = await generateImage(t.url, apiKey, { modelId, prompt: 'nobody home' });
    assert.deepEqual(errorCodes(refused), ['110202']);
    assert.equal(refused.body.errors?.[0]?.extensions?.status, 'maintenance');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 }, 'nothing charged');

    boxes[0] = await ComfyStandin.start({ checkpoints: [checkpoint], port: ports[0] });
    await t.logged(
      (e) => e.msg === 'backend back in rotation: its probe answered' && e.backend === boxIds[0],
    );
    await modelBecomes('ready');
    const { taskId } = await submitOk(t.url, apiKey, { modelId, prompt: 'back' });
    await boxes[0].runOf(promptOf(taskId));
    assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, FinishCode.Ok);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 - 3 });
    boxes[1] = await ComfyStandin.start({ checkpoints: [checkpoint], port: ports[1] });
    await drained(database.db);
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});
