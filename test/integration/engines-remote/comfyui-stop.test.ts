import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { comfyImageModel, posted, promptOf, withComfyApp } from '../../helpers/comfyui-models.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { gqlOk } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';
import type { ComfyStandin } from '../../helpers/standins/comfyui.ts';
import type { RecordedRequest } from '../../helpers/standins/standin-server.ts';

// Cancellation and time limits reach ComfyUI: the comfyui engine through the real service
// against the ComfyUI protocol stand-in (test/helpers/standins/comfyui.ts), which speaks
// ComfyUI's documented protocol (../shared/protocols/comfyui.md).

/** ComfyUI's `/interrupt` naming the task's prompt (an interrupt without an id stops any). */
const interruptOf = (taskId: string) => (r: RecordedRequest) =>
  posted('/interrupt')(r) && (r.json as { prompt_id?: unknown })?.prompt_id === promptOf(taskId);

const cancel = (url: string, apiKey: string, taskId: string) =>
  gqlOk<{ cancelTask: { finishCode: number } }>(
    url,
    apiKey,
    'mutation X($id: ID!) { cancelTask(taskId: $id) { finishCode } }',
    { id: taskId },
  );

describeEachBackend('the comfyui engine stops prompts (ComfyUI protocol stand-in)', (backend) => {
  let comfy: ComfyStandin;
  let database: Database;
  let t: TestApp;
  withComfyApp(
    backend,
    (url) => [
      comfyImageModel('mdl_comfy-sdxl', url),
      comfyImageModel('mdl_comfy-brief', url, {}, { maxRunSeconds: 1 }),
    ],
    (started) => {
      ({ comfy, database, t } = started);
    },
  );

  it('cancelling a running task interrupts its prompt (and no other), refunded', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ manual: true });
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_comfy-sdxl', prompt: 'p' });
    const run = await comfy.runOf(promptOf(taskId));
    await run.pace.waitingAt('start');
    assert.equal((await cancel(t.url, apiKey, taskId)).cancelTask.finishCode, FinishCode.Cancelled);
    await comfy.http.received(interruptOf(taskId), `POST /interrupt of ${promptOf(taskId)}`);
    const entry = await comfy.finished(promptOf(taskId));
    assert.equal(entry.status.messages.at(-1)?.[0], 'execution_interrupted');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('a server up to 0.3.56 is never sent an interrupt: it would stop any prompt, not ours', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.version = '0.3.56';
    try {
      comfy.script({ manual: true });
      const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_comfy-sdxl', prompt: 'p' });
      const run = await comfy.runOf(promptOf(taskId));
      await run.pace.waitingAt('start');
      const seen = new Set(comfy.http.requests);
      assert.equal(
        (await cancel(t.url, apiKey, taskId)).cancelTask.finishCode,
        FinishCode.Cancelled,
      );
      // The engine asked the version, then sent nothing that would stop what runs.
      await comfy.http.received(
        (r) => !seen.has(r) && r.method === 'GET' && r.path === '/system_stats',
        'GET /system_stats',
      );
      await t.logged((e) => e.msg === 'engine run ended' && e.taskId === taskId);
      assert.deepEqual(
        comfy.http.matching((r) => !seen.has(r) && posted('/interrupt')(r)),
        [],
      );
      const queue = (await (await fetch(`${comfy.url}/queue`)).json()) as Record<
        string,
        unknown[][]
      >;
      assert.deepEqual(
        queue.queue_running?.map((item) => item[1]),
        [promptOf(taskId)],
        'runs on',
      );
      run.pace.release();
      await comfy.finished(promptOf(taskId));
      assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
    } finally {
      comfy.version = '0.3.64';
    }
  });

  it('cancelling a task still queued on ComfyUI deletes it from the queue', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ manual: true }); // another user's prompt holds the GPU
    const { prompt_id: other } = (await (
      await fetch(`${comfy.url}/prompt`, {
        method: 'POST',
        body: JSON.stringify({ prompt: filledGraph() }),
      })
    ).json()) as { prompt_id: string };
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_comfy-sdxl', prompt: 'p' });
    await comfy.runOf(promptOf(taskId));
    await cancel(t.url, apiKey, taskId);
    await comfy.http.received(
      (r) =>
        posted('/queue')(r) &&
        JSON.stringify(r.json) === JSON.stringify({ delete: [promptOf(taskId)] }),
      'POST /queue {delete: [its prompt]}',
    );
    const queue = (await (await fetch(`${comfy.url}/queue`)).json()) as Record<string, unknown[][]>;
    assert.deepEqual(queue.queue_pending, []);
    assert.deepEqual(
      queue.queue_running?.map((item) => item[1]),
      [other],
      'the other prompt runs on',
    );
    (await comfy.runOf(other)).pace.release();
    await comfy.finished(other);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('stops a prompt that runs past the model’s time limit: code 3, interrupted, refunded', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ manual: true });
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_comfy-brief', prompt: 'p' });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.TimedOut);
    await comfy.http.received(interruptOf(taskId), `POST /interrupt of ${promptOf(taskId)}`);
    const entry = await comfy.finished(promptOf(taskId));
    assert.equal(entry.status.messages.at(-1)?.[0], 'execution_interrupted');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('stops waiting for an output that never finishes downloading: code 3, nothing stored', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const stalled = comfy.http.stallBody((r) => r.path === '/view');
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_comfy-brief',
      prompt: 'p',
    });
    await stalled.reached;
    const task = await waitForTask(t.url, apiKey, taskId);
    stalled.release();
    assert.equal(task.finishCode, FinishCode.TimedOut);
    const media = await database.db
      .selectFrom('media')
      .select('id')
      .where('content_id', '=', contentId)
      .execute();
    assert.deepEqual(media, []);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('kept the five invariants over every scenario above', async () => {
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});

/** A valid graph for the stand-in, as another ComfyUI user would queue it. */
function filledGraph(): Record<string, unknown> {
  const graph = structuredClone(comfyImageModel('x', '').engineOptions.workflow) as Record<
    string,
    { inputs: Record<string, unknown> }
  >;
  graph['5']!.inputs = { width: 32, height: 32, batch_size: 1 };
  graph['6']!.inputs.text = 'someone else';
  graph['7']!.inputs.text = '';
  graph['3']!.inputs.seed = 1;
  return graph;
}
