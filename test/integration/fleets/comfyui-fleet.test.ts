import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { checkpoint, promptOf } from '../../helpers/comfyui-models.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { attemptsOf, capsExceeded, comfyBackend, fleetModel } from '../../helpers/fleets.ts';
import { balances, submitOk } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { drained, invariantViolations } from '../../helpers/invariants.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ComfyStandin } from '../../helpers/standins/comfyui.ts';

// Issue 31: a model served by three ComfyUI boxes (protocol stand-ins, each able to run one
// prompt at a time, recording the most it ever held). Atelier holds each box's capacity: a
// box is sent a prompt only when it has none, the rest wait in Atelier's queue, and a box that
// dies mid-run hands its task to another box — one result, one charge — then sits out its
// cooldown until it answers its probe again.

describeEachBackend('a model on three ComfyUI boxes of one slot each (issue 31)', (backend) => {
  let boxes: ComfyStandin[];
  let database: Database;
  let t: TestApp;
  const modelId = 'mdl_fleet';
  const boxIds = ['box-1', 'box-2', 'box-3'].map((name) => `${modelId}/${name}`);

  before(async () => {
    boxes = await Promise.all(
      [1, 2, 3].map(() => ComfyStandin.start({ checkpoints: [checkpoint] })),
    );
    database = await createTestDatabase(backend);
    const health = { failuresBeforeCooldown: 1, cooldownSeconds: 1, probeSeconds: 0 };
    const model = fleetModel(
      modelId,
      boxes.map((box, i) => comfyBackend(`box-${i + 1}`, box, { health })),
    );
    t = await startTestApp(database, {
      env: {
        MODELS: JSON.stringify([model]),
        // More slots than the boxes have: the boxes' caps, not the workers, must hold them back.
        WORKER_CONCURRENCY: '6',
        ACCOUNT_MAX_RUNNING_TASKS: '0',
      },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    for (const box of boxes ?? []) await box.close();
  });

  /** The box a task's prompt went to, and its run there. */
  const placedOn = (taskId: string) =>
    Promise.any(boxes.map(async (box, i) => ({ box: i, run: await box.runOf(promptOf(taskId)) })));
  const prompts = (box: ComfyStandin) =>
    box.http.matching((r) => r.method === 'POST' && r.path === '/prompt').length;

  it('30 tasks: never two prompts on a box, every task done once, each charged once', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } });
    const submitted = [];
    for (let i = 0; i < 30; i++) {
      submitted.push(await submitOk(t.url, apiKey, { modelId, prompt: `tile ${i}` }));
    }
    await drained(database.db);
    const finished = await database.db
      .selectFrom('tasks')
      .select(['id', 'finish_code'])
      .where('model_id', '=', modelId)
      .execute();
    assert.equal(finished.length, 30);
    assert.ok(finished.every((task) => task.finish_code === FinishCode.Ok));
    assert.deepEqual(
      boxes.map((box) => box.mostAtOnce),
      [1, 1, 1],
      'each box held one prompt at most, and each was used',
    );
    assert.equal(
      boxes.map(prompts).reduce((a, b) => a + b),
      30,
      'one prompt per task',
    );
    assert.deepEqual(await capsExceeded(database.db), []);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 1000 - 30 * 3 });
    assert.deepEqual(await invariantViolations(database.db), []);
  });

  it('a box killed mid-run: its task finishes on another, charged once; the box sits out until its probe answers', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    for (const box of boxes) box.script({ manual: true });
    const tasks = [];
    for (let i = 0; i < 3; i++) {
      tasks.push(await submitOk(t.url, apiKey, { modelId, prompt: `held ${i}` }));
    }
    // One held run on each box: every slot taken.
    const placed = await Promise.all(tasks.map((task) => placedOn(task.taskId)));
    assert.deepEqual(placed.map((p) => p.box).sort(), [0, 1, 2], 'one task on each box');
    await Promise.all(placed.map((p) => p.run.pace.waitingAt()));
    const victim = tasks[placed.findIndex((p) => p.box === 0)]!;
    const port = Number(new URL(boxes[0]!.url).port);

    await boxes[0]!.kill();
    const wentDown = await t.logged(
      (e) => e.msg === 'backend out of rotation: failures in a row' && e.backend === boxIds[0],
    );
    assert.equal(wentDown.cooldownSeconds, 1);
    // It waits in Atelier's queue for a slot (the others are full), then runs elsewhere.
    for (const p of placed.filter((p) => p.box !== 0)) p.run.pace.release();
    await drained(database.db);

    const rows = await database.db
      .selectFrom('tasks')
      .select(['id', 'finish_code', 'attempts'])
      .where(
        'id',
        'in',
        tasks.map((task) => task.taskId),
      )
      .execute();
    assert.ok(
      rows.every((row) => row.finish_code === FinishCode.Ok),
      JSON.stringify(rows),
    );
    const history = await attemptsOf(database.db, victim.taskId);
    assert.equal(history.length, 2, JSON.stringify(history));
    assert.equal(history[0]!.backend, boxIds[0]);
    assert.notEqual(history[0]!.outcome, 'ok');
    assert.ok(boxIds.slice(1).includes(history[1]!.backend));
    assert.equal(history[1]!.outcome, 'ok');
    // The account sees the count; the backends and the failure are the operator's.
    const seen = await graphql<{ getTask: { attempts: number } }>(t.url, {
      apiKey,
      query: `{ getTask(taskId: "${victim.taskId}") { attempts } }`,
    });
    assert.equal(seen.body.data?.getTask.attempts, 2);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 - 3 * 3 });
    const [down] = await database.db
      .selectFrom('backends')
      .select(['state', 'last_error'])
      .where('id', '=', boxIds[0]!)
      .execute();
    assert.equal(down?.state, 'down');
    // Operators read it in /readyz and /metrics: the pool is degraded, the box out.
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as {
      pools: Array<{
        modelId: string;
        status: string;
        backends: Array<{ name: string; state: string }>;
      }>;
    };
    const pool = ready.pools.find((p) => p.modelId === modelId);
    assert.equal(pool?.status, 'degraded');
    assert.deepEqual(
      pool.backends.map((b) => [b.name, b.state]),
      [
        ['box-1', 'down'],
        ['box-2', 'up'],
        ['box-3', 'up'],
      ],
    );
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(metrics, /^atelier_backend_up\{model_id="mdl_fleet",backend="box-1"\} 0$/m);
    assert.match(metrics, /^atelier_backend_capacity\{model_id="mdl_fleet",backend="box-2"\} 1$/m);
    // An admin reads the same in the catalogue; anyone else is refused the field.
    const backendsOf = `{ getModel(modelId: "${modelId}") { status backends { name state inFlight maxConcurrent lastError } } }`;
    const admin = await seedAccount(t.app, { role: 'admin' });
    const { body } = await graphql<{
      getModel: { status: string; backends: Array<Record<string, unknown>> };
    }>(t.url, { apiKey: admin.apiKey, query: backendsOf });
    assert.equal(body.data?.getModel.status, 'ready', 'two boxes of three still serve');
    assert.deepEqual(
      body.data?.getModel.backends.map((b) => [b.name, b.state, b.maxConcurrent]),
      [
        ['box-1', 'down', 1],
        ['box-2', 'up', 1],
        ['box-3', 'up', 1],
      ],
    );
    assert.match(String(body.data?.getModel.backends[0]?.lastError), /No answer|ECONNREFUSED/);
    const user = await graphql(t.url, { apiKey, query: backendsOf });
    assert.deepEqual(errorCodes(user), ['110202']);

    // Back where it was: its probe answers, and it takes work again.
    boxes[0] = await ComfyStandin.start({ checkpoints: [checkpoint], port });
    await t.logged(
      (e) => e.msg === 'backend back in rotation: its probe answered' && e.backend === boxIds[0],
    );
    for (const box of boxes) box.script({ manual: true });
    const more = [];
    for (let i = 0; i < 3; i++) {
      more.push(await submitOk(t.url, apiKey, { modelId, prompt: `after ${i}` }));
    }
    const again = await Promise.all(more.map((task) => placedOn(task.taskId)));
    assert.deepEqual(again.map((p) => p.box).sort(), [0, 1, 2], 'the box is back in the pool');
    for (const p of again) p.run.pace.release();
    await drained(database.db);
    assert.deepEqual(await capsExceeded(database.db), []);
    assert.deepEqual(await invariantViolations(database.db), []);
  });
  it('a run whose lease passed on keeps its box: the next attempt resumes the prompt there, queued once', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    for (const box of boxes) box.script({ manual: true });
    const { taskId } = await submitOk(t.url, apiKey, { modelId, prompt: 'hand over' });
    const first = await placedOn(taskId);
    await first.run.pace.waitingAt('start');
    // What another worker's sweep does to a lease it saw expire: the slot is free again.
    await database.db
      .updateTable('tasks')
      .set({ status: 'queued', lease_token: null, lease_owner: null, lease_expires_at: null })
      .where('id', '=', taskId)
      .execute();
    await t.logged((e) => e.msg === 'task started' && e.taskId === taskId && e.attempt === 2);
    first.run.pace.release();
    await drained(database.db);
    const [task] = await database.db
      .selectFrom('tasks')
      .select(['finish_code', 'backend_id'])
      .where('id', '=', taskId)
      .execute();
    assert.equal(task?.finish_code, FinishCode.Ok);
    assert.equal(task?.backend_id, boxIds[first.box], 'the second attempt ran on the same box');
    assert.equal(
      boxes.reduce(
        (n, box) =>
          n +
          box.http.matching(
            (r) =>
              r.method === 'POST' &&
              r.path === '/prompt' &&
              (r.json as { prompt_id?: string } | undefined)?.prompt_id === promptOf(taskId),
          ).length,
        0,
      ),
      1,
      'the prompt was queued once, on one box',
    );
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 - 3 });
  });
});
