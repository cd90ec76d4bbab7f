import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { checkpoint, promptOf } from '../../helpers/comfyui-models.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { capsExceeded, comfyBackend, fleetModel, replicateBackend } from '../../helpers/fleets.ts';
import { balances, fakeModel, submitOk } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { drained, invariantViolations } from '../../helpers/invariants.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { hostedModels, tokenEnv } from '../../helpers/replicate.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ComfyStandin } from '../../helpers/standins/comfyui.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';

// Issue 31 §1–3: how a pool's tasks are dispatched. Tiers (a ComfyUI box first, Replicate as
// overflow only while the box is full), no head-of-line blocking (a saturated pool leaves the
// workers to other models), and fair share (one account's long queue does not hold up
// another account's single task). Providers are protocol stand-ins; the others run on the
// fake engine, pooled like any backend.

describeEachBackend('a ComfyUI box with Replicate as overflow (issue 31 §1)', (backend) => {
  let box: ComfyStandin;
  let replicate: ReplicateStandin;
  let database: Database;
  let t: TestApp;
  const modelId = 'mdl_overflow';

  before(async () => {
    box = await ComfyStandin.start({ checkpoints: [checkpoint] });
    replicate = await ReplicateStandin.start({ models: hostedModels });
    database = await createTestDatabase(backend);
    const model = fleetModel(modelId, [
      comfyBackend('box', box, { maxConcurrent: 1, priority: 1 }),
      replicateBackend('replicate', replicate, { maxConcurrent: 2, priority: 2 }),
    ]);
    t = await startTestApp(database, {
      env: {
        MODELS: JSON.stringify([model]),
        [tokenEnv]: replicate.token,
        WORKER_CONCURRENCY: '6',
        ACCOUNT_MAX_RUNNING_TASKS: '0',
      },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    await box?.close();
    await replicate?.close();
  });

  it('tier 2 takes work only while tier 1 is full; with both full, a task waits for the first free slot of the first tier', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    box.script({ manual: true }, { manual: true });
    replicate.script({ manual: true }, { manual: true });

    const first = await submitOk(t.url, apiKey, { modelId, prompt: 'one' });
    const onBox = await box.runOf(promptOf(first.taskId));
    await onBox.pace.waitingAt();
    assert.equal(replicate.predictions.size, 0, 'the box had room: Replicate was not asked');

    await submitOk(t.url, apiKey, { modelId, prompt: 'two' });
    await submitOk(t.url, apiKey, { modelId, prompt: 'three' });
    const overflow = [await replicate.nextPrediction(), await replicate.nextPrediction()];
    const waiting = await submitOk(t.url, apiKey, { modelId, prompt: 'four' });
    const [queued] = await database.db
      .selectFrom('tasks')
      .select('status')
      .where('id', '=', waiting.taskId)
      .execute();
    assert.equal(queued?.status, 'queued', 'both tiers full: it waits in Atelier’s queue');

    onBox.pace.release();
    const next = await box.runOf(promptOf(waiting.taskId));
    next.pace.release();
    for (const prediction of overflow) prediction.pace.release();
    await drained(database.db);

    assert.equal(replicate.predictions.size, 2);
    assert.deepEqual([box.mostAtOnce, replicate.mostAtOnce], [1, 2]);
    assert.deepEqual(await capsExceeded(database.db), []);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 - 4 * 3 });
    assert.deepEqual(await invariantViolations(database.db), []);
  });

  it('where a task stands: its place in the pool’s queue and when it should start, on GraphQL and over MCP', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    box.script({ manual: true });
    replicate.script({ manual: true }, { manual: true });
    const running = [];
    for (let i = 0; i < 3; i++) {
      running.push(await submitOk(t.url, apiKey, { modelId, prompt: `full ${i}` }));
    }
    const onBox = await box.runOf(promptOf(running[0]!.taskId));
    const overflow = [await replicate.nextPrediction(), await replicate.nextPrediction()];
    const first = await submitOk(t.url, apiKey, { modelId, prompt: 'waits first' });
    const second = await submitOk(t.url, apiKey, { modelId, prompt: 'waits second' });

    const fields = 'status queuePosition estimatedStartAt estimatedFinishAt';
    const { body } = await graphql<Record<string, Record<string, string | number | null>>>(t.url, {
      apiKey,
      query: `{ running: getTask(taskId: "${running[0]!.taskId}") { ${fields} startedAt }
        first: getTask(taskId: "${first.taskId}") { ${fields} }
        second: getTask(taskId: "${second.taskId}") { ${fields} } }`,
    });
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    const place = body.data!;
    assert.deepEqual(
      [place.first!.queuePosition, place.second!.queuePosition, place.running!.queuePosition],
      [0, 1, null],
    );
    // The earlier test's runs give the pool its run times: every estimate is known.
    const time = (v: unknown) => new Date(String(v)).getTime();
    // Not before the first: each takes the next slot to free (two overdue runs free theirs now).
    assert.ok(time(place.second!.estimatedStartAt) >= time(place.first!.estimatedStartAt));
    assert.ok(time(place.first!.estimatedFinishAt) > time(place.first!.estimatedStartAt));
    assert.ok(time(place.running!.estimatedStartAt) >= time(place.running!.startedAt));

    // An agent reads the same over MCP.
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      const state = (await client.callTool({
        name: 'get_generation',
        arguments: { content_id: second.contentId },
      })) as { structuredContent: Record<string, unknown> };
      assert.equal(state.structuredContent.queue_position, 1);
      // Read a moment later: the same estimate, or later where a run is already overdue.
      assert.ok(
        time(state.structuredContent.estimated_start_at) >= time(place.second!.estimatedStartAt),
      );
      // Waiting with a progress token: the first notification says where the task stands.
      const notes: { progress: number; message?: string }[] = [];
      await client.callTool(
        { name: 'wait_for_generation', arguments: { task_id: second.taskId, timeout_seconds: 1 } },
        undefined,
        { onprogress: (p) => notes.push(p) },
      );
      assert.match(notes[0]?.message ?? '', /^queued, 1 ahead, (starting now|about \d+ s)$/);
    } finally {
      await client.close();
    }

    onBox.pace.release();
    for (const prediction of overflow) prediction.pace.release();
    await drained(database.db);
    const { body: done } = await graphql<Record<string, Record<string, unknown>>>(t.url, {
      apiKey,
      query: `{ getTask(taskId: "${second.taskId}") { ${fields} } }`,
    });
    assert.deepEqual(done.data!.getTask, {
      status: 'finished',
      queuePosition: null,
      estimatedStartAt: null,
      estimatedFinishAt: null,
    });
  });
});

describeEachBackend('dispatch over pools on the fake engine (issue 31 §2–3)', (backend) => {
  let database: Database;
  let t: TestApp;

  before(async () => {
    database = await createTestDatabase(backend);
    const pooled = (modelId: string, durationMs: number) => ({
      ...fakeModel(modelId, {}),
      engine: undefined,
      engineOptions: undefined,
      backends: [{ name: 'only', engine: 'fake', engineOptions: { durationMs }, maxConcurrent: 1 }],
    });
    t = await startTestApp(database, {
      env: {
        MODELS: JSON.stringify([
          pooled('mdl_slow-pool', 60_000),
          pooled('mdl_busy-pool', 150),
          fakeModel('mdl_elsewhere', {}),
        ]),
        WORKER_CONCURRENCY: '2',
        ACCOUNT_MAX_RUNNING_TASKS: '0',
        SHUTDOWN_DRAIN_MS: '0',
      },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
  });

  const statusOf = async (taskId: string) =>
    await database.db
      .selectFrom('tasks')
      .select(['status', 'finish_code', 'created_at', 'started_at', 'account_id'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();

  it('a saturated pool holds up no other model: its queue waits, the other model’s task runs', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } });
    const stuck = [];
    for (let i = 0; i < 10; i++) {
      stuck.push(await submitOk(t.url, apiKey, { modelId: 'mdl_slow-pool', prompt: `slow ${i}` }));
    }
    const other = await submitOk(t.url, apiKey, { modelId: 'mdl_elsewhere', prompt: 'go' });
    for (;;) {
      const { status, finish_code } = await statusOf(other.taskId);
      if (status === 'finished') {
        assert.equal(finish_code, FinishCode.Ok);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const waiting = await database.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('model_id', '=', 'mdl_slow-pool')
      .where('status', '=', 'queued')
      .executeTakeFirstOrThrow();
    assert.equal(Number(waiting.n), 9, 'one runs on the pool’s one slot, nine wait');
  });

  it('fair share: behind 60 queued tasks of one account, another account’s task starts at the next free slot', async () => {
    const a = await seedAccount(t.app, { credits: { standard: 1000 } });
    const b = await seedAccount(t.app, { credits: { standard: 100 } });
    for (let i = 0; i < 60; i++) {
      await submitOk(t.url, a.apiKey, { modelId: 'mdl_busy-pool', prompt: `a ${i}` });
    }
    const single = await submitOk(t.url, b.apiKey, { modelId: 'mdl_busy-pool', prompt: 'b' });
    let mine = await statusOf(single.taskId);
    while (mine.started_at === null) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      mine = await statusOf(single.taskId);
    }
    const overtaking = await database.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', a.account.id)
      .where('started_at', '>', mine.created_at)
      .where('started_at', '<', mine.started_at)
      .executeTakeFirstOrThrow();
    assert.ok(Number(overtaking.n) <= 1, `${overtaking.n} of A's tasks started before B's`);
    const queuedOfA = await database.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', a.account.id)
      .where('status', '=', 'queued')
      .executeTakeFirstOrThrow();
    assert.ok(Number(queuedOfA.n) >= 40, `A still had ${queuedOfA.n} queued when B started`);
  });
});
