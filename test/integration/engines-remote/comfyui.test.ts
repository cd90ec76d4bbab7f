import assert from 'node:assert/strict';
import { it } from 'node:test';
import sharp from 'sharp';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { comfyImageModel, posted, promptOf, withComfyApp } from '../../helpers/comfyui-models.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { download, gqlOk } from '../../helpers/media.ts';
import { accountWords, failureAudiences } from '../../helpers/remote-engines.ts';
import { seedAccount } from '../../helpers/seed.ts';
import type { ComfyStandin } from '../../helpers/standins/comfyui.ts';

// The comfyui engine through the real service (GraphQL in, worker, storage) against the ComfyUI
// protocol stand-in (test/helpers/standins/comfyui.ts): a local HTTP + WebSocket server that
// speaks ComfyUI's documented protocol (../shared/protocols/comfyui.md), since ComfyUI itself
// cannot run here.

describeEachBackend('the comfyui engine makes images (ComfyUI protocol stand-in)', (backend) => {
  let comfy: ComfyStandin;
  let database: Database;
  let t: TestApp;
  withComfyApp(
    backend,
    (url) => [
      comfyImageModel('mdl_comfy-sdxl', url),
      comfyImageModel('mdl_comfy-small', url, { maxOutputBytes: 2_000 }),
      comfyImageModel('mdl_comfy-prefixed', `${url}/api`),
    ],
    (started) => {
      ({ comfy, database, t } = started);
    },
  );

  it('makes the images asked, sending the filled workflow, charged once', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_comfy-sdxl',
      prompt: 'a lighthouse at dawn {{seed}} $&',
      negativePrompt: 'blurry',
      width: 64,
      height: 48,
      count: 2,
      seed: 1234,
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');

    const sent = (await comfy.http.received(posted('/prompt'))).json as Record<string, unknown>;
    assert.equal(sent.prompt_id, promptOf(taskId));
    assert.equal(sent.client_id, promptOf(taskId));
    const graph = sent.prompt as Record<string, { inputs: Record<string, unknown> }>;
    assert.deepEqual(graph['5']?.inputs, { width: 64, height: 48, batch_size: 2 });
    assert.equal(graph['3']?.inputs.seed, 1234);
    assert.equal(graph['6']?.inputs.text, 'a lighthouse at dawn {{seed}} $&, highly detailed');
    assert.equal(graph['7']?.inputs.text, 'blurry');

    const { getContent } = await gqlOk<{ getContent: { media: { mediaId: string }[] } }>(
      t.url,
      apiKey,
      'query C($id: ID!) { getContent(contentId: $id) { media { mediaId } } }',
      { id: contentId },
    );
    assert.equal(getContent.media.length, 2);
    for (const { mediaId } of getContent.media) {
      const meta = await sharp(await download(t.url, apiKey, mediaId)).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['png', 64, 48]);
    }
    assert.deepEqual(await balances(t.url, apiKey), { standard: 4 }, '2 images × 3 credits');
  });

  it('passes the sampler’s progress on to the task', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ manual: true, steps: 4 });
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_comfy-sdxl', prompt: 'p' });
    const run = await comfy.runOf(promptOf(taskId));
    await run.pace.waitingAt('start');
    run.pace.advance(2); // start, progress 1 of 4
    await run.pace.waitingAt('progress 2');
    const midway = await waitForTask(t.url, apiKey, taskId, (task) => (task.progress ?? 0) > 0);
    assert.equal(midway.status, 'running');
    assert.ok(midway.progress! > 0.2 && midway.progress! < 0.3, `${midway.progress} ≈ 1/4`);
    run.pace.release();
    const done = await waitForTask(t.url, apiKey, taskId);
    assert.deepEqual([done.finishCode, done.progress], [FinishCode.Ok, 1]);
  });

  it('finishes a failing node with code 1, its node and message in the log, refunded', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ fail: { message: 'Allocation on device sk-live-12345678 failed' } });
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_comfy-sdxl', prompt: 'p' });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    const detail = await failureAudiences(t, task, accountWords.failed);
    assert.match(detail, /node 3 \(KSampler\): Allocation on device/);
    assert.doesNotMatch(detail, /sk-live-12345678/, 'key-like text redacted');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('a workflow refused for a checkpoint not on the server: code 1, the node and why in the log', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    // The server's checkpoint is gone: ComfyUI refuses the prompt with an empty `details`; the
    // cause is in node_errors only (execution.py validate_prompt).
    const installed = comfy.checkpoints.splice(0);
    try {
      const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_comfy-sdxl', prompt: 'p' });
      const task = await waitForTask(t.url, apiKey, taskId);
      assert.equal(task.finishCode, FinishCode.EngineFailure);
      const detail = await failureAudiences(t, task, accountWords.failed);
      assert.match(detail, /ComfyUI refused the workflow: Prompt outputs failed validation; /);
      assert.match(
        detail,
        /node 4 \(CheckpointLoaderSimple\): Value not in list: ckpt_name: 'sd_xl_base_1\.0\.safetensors' not in \[\]/,
      );
    } finally {
      comfy.checkpoints.push(...installed);
    }
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('fails an output larger than the model allows, cleanly: code 1, nothing stored', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const big = await sharp({
      create: {
        width: 64,
        height: 48,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 128, sigma: 60 },
      },
    })
      .png()
      .toBuffer();
    assert.ok(big.length > 2_000);
    comfy.script({ file: { bytes: big, extension: 'png' } });
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_comfy-small',
      prompt: 'p',
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(
      await failureAudiences(t, task, accountWords.unusable),
      /^ComfyUI's output atelier_\d+_\.png: .*larger than 2000 bytes/,
    );
    const media = await database.db
      .selectFrom('media')
      .select('id')
      .where('content_id', '=', contentId)
      .execute();
    assert.deepEqual(media, []);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('reaches a server under a path prefix (ComfyUI’s own /api routes)', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const { taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_comfy-prefixed',
      prompt: 'p',
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const paths = comfy.http
      .matching((r) => r.path.startsWith('/api/'))
      .map((r) => `${r.method} ${r.path.replace(/\/history\/.*/, '/history/…')}`);
    for (const route of ['POST /api/prompt', 'GET /api/history/…', 'GET /api/view']) {
      assert.ok(paths.includes(route), `${route} in ${paths}`);
    }
  });

  it('reports the ComfyUI server in /readyz and /metrics after its calls', async () => {
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as {
      backends?: { backend: string; reachable: boolean | null; calls: number }[];
    };
    const backend = `comfyui ${comfy.url}`;
    const mine = ready.backends?.find((b) => b.backend === backend);
    assert.equal(mine?.reachable, true, JSON.stringify(ready));
    assert.ok(mine.calls > 0);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(
        `atelier_backend_call_duration_seconds_count\\{backend="${backend}",outcome="ok",status="200"\\} [1-9]`,
      ),
    );
  });

  it('kept the five invariants over every scenario above', async () => {
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});
