import assert from 'node:assert/strict';
import { it } from 'node:test';
import sharp from 'sharp';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import {
  comfyVideoModel,
  promptOf,
  testVideo,
  withComfyApp,
} from '../../helpers/comfyui-models.ts';
import { balances, waitForTask } from '../../helpers/generation.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { download, gqlOk, probe, testPicture, uploadOk } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';
import type { ComfyStandin } from '../../helpers/standins/comfyui.ts';

// The comfyui engine through the real service (GraphQL in, worker, storage) against the ComfyUI
// protocol stand-in (test/helpers/standins/comfyui.ts): a local HTTP + WebSocket server that
// speaks ComfyUI's documented protocol (../shared/protocols/comfyui.md), since ComfyUI itself
// cannot run here.

describeEachBackend('the comfyui engine makes videos (ComfyUI protocol stand-in)', (backend) => {
  let comfy: ComfyStandin;
  let database: Database;
  let t: TestApp;
  withComfyApp(
    backend,
    (url) => [
      comfyVideoModel('mdl_comfy-video', url),
      comfyVideoModel('mdl_comfy-animate', url, 'image'),
      comfyVideoModel('mdl_comfy-vhs', url, 'vhs'),
    ],
    (started) => {
      ({ comfy, database, t } = started);
    },
  );

  it('makes a video from a video workflow: MP4 probed, priced per second', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ file: { bytes: await testVideo(2), extension: 'mp4' } });
    const { generateVideo } = await gqlOk<{ generateVideo: { contentId: string; taskId: string } }>(
      t.url,
      apiKey,
      'mutation V($input: GenerateVideoInput!) { generateVideo(input: $input) { contentId taskId } }',
      { input: { modelId: 'mdl_comfy-video', prompt: 'waves', durationSeconds: 2 } },
    );
    const task = await waitForTask(t.url, apiKey, generateVideo.taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const sent = (await comfy.runOf(promptOf(generateVideo.taskId))).workflow;
    assert.equal(sent['5']?.inputs?.batch_size, 16, '2 seconds × 8 fps');
    assert.equal(sent['10']?.inputs?.fps, 8);
    const { getContent } = await gqlOk<{
      getContent: { media: { mediaId: string; mimeType: string }[] };
    }>(
      t.url,
      apiKey,
      'query C($id: ID!) { getContent(contentId: $id) { media { mediaId mimeType } } }',
      { id: generateVideo.contentId },
    );
    assert.equal(getContent.media[0]?.mimeType, 'video/mp4');
    const probed = await probe(await download(t.url, apiKey, getContent.media[0]!.mediaId));
    assert.ok(probed.streams.some((s) => s.type === 'video'));
    assert.deepEqual(await balances(t.url, apiKey), { standard: 6 }, '2 seconds × 2 credits');
  });

  it('animates an uploaded image: sent to ComfyUI as PNG, named in the workflow', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const still = await testPicture(128, 96, 'jpeg');
    const imageMediaId = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/jpeg',
      bytes: still,
    });
    comfy.script({ file: { bytes: await testVideo(1), extension: 'mp4' } });
    const { generateVideo } = await gqlOk<{ generateVideo: { taskId: string } }>(
      t.url,
      apiKey,
      'mutation V($input: GenerateVideoInput!) { generateVideo(input: $input) { taskId } }',
      {
        input: { modelId: 'mdl_comfy-animate', prompt: 'drift', imageMediaId, durationSeconds: 1 },
      },
    );
    const { taskId } = generateVideo;
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const name = `${promptOf(taskId)}.png`;
    const sent = (await comfy.runOf(promptOf(taskId))).workflow;
    assert.equal(sent['12']?.inputs?.image, name, 'LoadImage reads the upload');
    const uploaded = comfy.files.get('input', '', name);
    assert.ok(uploaded, 'uploaded through POST /upload/image');
    const meta = await sharp(uploaded).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 128, 96]);
  });

  it('takes the video a Video Helper Suite node lists under `gifs`', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ file: { bytes: await testVideo(1), extension: 'mp4' } });
    const { generateVideo } = await gqlOk<{ generateVideo: { contentId: string; taskId: string } }>(
      t.url,
      apiKey,
      'mutation V($input: GenerateVideoInput!) { generateVideo(input: $input) { contentId taskId } }',
      { input: { modelId: 'mdl_comfy-vhs', prompt: 'rain', durationSeconds: 1 } },
    );
    const task = await waitForTask(t.url, apiKey, generateVideo.taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const entry = await comfy.finished(promptOf(generateVideo.taskId));
    const gifs = entry.outputs['14']?.gifs as { filename: string }[] | undefined;
    assert.match(gifs?.[0]?.filename ?? '', /^atelier_\d{5}\.mp4$/, 'listed under gifs');
    const { getContent } = await gqlOk<{ getContent: { media: { mediaId: string }[] } }>(
      t.url,
      apiKey,
      'query C($id: ID!) { getContent(contentId: $id) { media { mediaId } } }',
      { id: generateVideo.contentId },
    );
    const bytes = await download(t.url, apiKey, getContent.media[0]!.mediaId);
    assert.ok(
      bytes.equals(comfy.files.get('output', '', gifs![0]!.filename)!),
      'the file ComfyUI saved',
    );
  });

  it('kept the five invariants over every scenario above', async () => {
    assert.deepEqual(await invariantViolations(database.db), []);
  });
});
