import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend, perBackend } from '../../helpers/backends.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { download, gqlOk, probe, testPicture, testTone, uploadOk } from '../../helpers/media.ts';
import { accountWords, failureAudiences } from '../../helpers/remote-engines.ts';
import {
  hostedModels,
  imageModel,
  replicateModels,
  submit,
  testClip,
  tokenEnv,
  videoVersion,
} from '../../helpers/replicate.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';

// Videos, talking avatars and speech made on Replicate by the `replicate` engine (issue 17), and output
// files that are too big or too slow, against a protocol stand-in for Replicate's predictions
// API (test/helpers/standins/replicate.ts).

// One stand-in per backend: the two suites run side by side, each taking its predictions in order.
const standinFor = await perBackend(() => ReplicateStandin.start({ models: hostedModels }));

const mediaQuery = `query C($id: ID!) { getContent(contentId: $id) {
  creditsCharged creditsRefunded media { mediaId kind mimeType durationMs } } }`;
interface ContentMedia {
  getContent: {
    creditsCharged: number;
    creditsRefunded: number;
    media: { mediaId: string; kind: string; mimeType: string; durationMs: number | null }[];
  };
}

describeEachBackend('replicate video, avatar, speech and output limits', (backend) => {
  const standin = standinFor(backend);
  let t: TestApp;
  const tiny = imageModel(standin, 'mdl_rep-tiny', { maxOutputBytes: 100 });
  const slow = imageModel(standin, 'mdl_rep-slow', { outputTimeoutMs: 300 });
  const env = { MODELS: replicateModels(standin, [tiny, slow]), [tokenEnv]: standin.token };
  withTestApp(backend, { env }, (started) => {
    ({ t } = started);
  });
  let apiKey: string;
  before(async () => {
    ({ apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } }));
  });
  const contentOf = (id: string) => gqlOk<ContentMedia>(t.url, apiKey, mediaQuery, { id });

  it('makes a video with a versioned model: POST /predictions with the version and Prefer: wait, MP4 stored', async () => {
    const clip = await testClip(false);
    standin.script({ form: 'url', files: [{ bytes: clip, extension: 'mp4' }] });
    const { contentId, taskId } = await submit(t.url, apiKey, 'generateVideo', {
      modelId: 'mdl_rep-video',
      prompt: 'waves on a lake',
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    // This backend's run is the latest: the task has finished, so its create came.
    const create = standin.http
      .matching((r) => r.method === 'POST' && r.path === '/v1/predictions')
      .at(-1)!;
    assert.deepEqual([create.headers.prefer, create.headers['cancel-after']], ['wait=5', '600s']);
    assert.deepEqual(create.json, {
      version: `acme/clip-maker:${videoVersion}`,
      input: { prompt: 'waves on a lake', seconds: 1, size: '64x48' },
    });
    const { getContent } = await contentOf(contentId);
    assert.equal(getContent.media.length, 1);
    assert.deepEqual(
      [getContent.media[0]!.kind, getContent.media[0]!.mimeType],
      ['video', 'video/mp4'],
    );
    assert.ok((await download(t.url, apiKey, getContent.media[0]!.mediaId)).equals(clip));
    assert.deepEqual([getContent.creditsCharged, getContent.creditsRefunded], [5, 0]);
  });

  it('makes a talking avatar from the portrait (data: URI) and the speech (Files API); refuses a script', async () => {
    const portrait = await testPicture(64, 64);
    const speech = await testTone(1);
    const portraitMediaId = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: portrait,
    });
    const { createAvatar } = await gqlOk<{ createAvatar: { avatarId: string } }>(
      t.url,
      apiKey,
      'mutation A($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
      { input: { name: 'Ada', portraitMediaId } },
    );
    const audioMediaId = await uploadOk(t.url, apiKey, {
      kind: 'audio',
      mimeType: 'audio/wav',
      bytes: speech,
    });
    const clip = await testClip(true);
    standin.script({ form: 'url', files: [{ bytes: clip, extension: 'mp4' }] });
    const { contentId, taskId } = await submit(t.url, apiKey, 'generateAvatarVideo', {
      modelId: 'mdl_rep-avatar',
      avatarId: createAvatar.avatarId,
      audioMediaId,
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    // This backend's run is the latest: the task has finished, so its create came.
    const create = standin.http
      .matching((r) => r.path === '/v1/models/acme/talking-head/predictions')
      .at(-1)!;
    const input = (create.json as { input: { face: string; speech: string } }).input;
    assert.match(input.face, /^data:image\/png;base64,/, 'a small file goes inline');
    const fileId = new RegExp(`^${standin.http.url}/v1/files/(\\w+)$`).exec(input.speech)?.[1];
    assert.ok(fileId, `a large file is uploaded and passed by URL: ${input.speech.slice(0, 80)}`);
    assert.ok(standin.files.stored.get(fileId)?.bytes.equals(speech), 'the uploaded speech');
    const { getContent } = await contentOf(contentId);
    const media = getContent.media[0]!;
    assert.deepEqual([media.kind, media.mimeType], ['video', 'video/mp4']);
    const probed = await probe(await download(t.url, apiKey, media.mediaId));
    assert.ok(
      probed.streams.some((s) => s.type === 'audio'),
      'with its sound',
    );

    // The model speaks only an uploaded audio: a script is refused (code 4) and refunded.
    const before = await balances(t.url, apiKey);
    const scripted = await submit(t.url, apiKey, 'generateAvatarVideo', {
      modelId: 'mdl_rep-avatar',
      avatarId: createAvatar.avatarId,
      script: 'Hello there.',
    });
    const refused = await waitForTask(t.url, apiKey, scripted.taskId);
    assert.equal(refused.finishCode, FinishCode.RejectedInput);
    assert.match(refused.finishMessage ?? '', /give audioMediaId instead of a script/);
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('speaks a text with a speech model: the voice and speed sent, the WAV stored', async () => {
    const spoken = await testTone(1);
    standin.script({ form: 'url', files: [{ bytes: spoken, extension: 'wav' }] });
    const { contentId, taskId } = await submit(t.url, apiKey, 'generateSpeech', {
      modelId: 'mdl_rep-speech',
      voiceModelId: 'voc_en-gb',
      text: 'Hello from Replicate.',
      speed: 1.5,
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    // This backend's run is the latest: the task has finished, so its create came.
    const create = standin.http
      .matching((r) => r.path === '/v1/models/acme/read-aloud/predictions')
      .at(-1)!;
    assert.deepEqual(create.json, {
      input: { text: 'Hello from Replicate.', voice: 'en-gb', speed: 1.5 },
    });
    const { getContent } = await contentOf(contentId);
    const media = getContent.media[0]!;
    assert.deepEqual([media.kind, media.mimeType], ['audio', 'audio/wav']);
    assert.ok(Math.abs((media.durationMs ?? 0) - 2000) < 100, `lasts ${media.durationMs} ms`);
    assert.ok((await download(t.url, apiKey, media.mediaId)).equals(spoken));
  });

  it('speech in another format than the one asked for fails with code 1, refunded', async () => {
    const before = await balances(t.url, apiKey);
    const mp3 = await testTone(1, 'mp3');
    standin.script({ form: 'url', files: [{ bytes: mp3, extension: 'mp3' }] });
    const { taskId } = await submit(t.url, apiKey, 'generateSpeech', {
      modelId: 'mdl_rep-speech',
      voiceModelId: 'voc_en-gb',
      text: 'The wrong format.',
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure, task.finishMessage ?? '');
    assert.match(
      await failureAudiences(t, task, accountWords.unusable),
      /made mp3 audio, not the wav asked for/,
    );
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('stores speech with the type its bytes have, not the type its URL names', async () => {
    const spoken = await testTone(1);
    standin.script({ form: 'url', files: [{ bytes: spoken, extension: 'mp3' }] });
    const { contentId, taskId } = await submit(t.url, apiKey, 'generateSpeech', {
      modelId: 'mdl_rep-speech',
      voiceModelId: 'voc_en-gb',
      text: 'A WAV named .mp3.',
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const media = (await contentOf(contentId)).getContent.media[0]!;
    assert.deepEqual([media.kind, media.mimeType], ['audio', 'audio/wav']);
  });

  it('an output over maxOutputBytes fails with code 1, refunded', async () => {
    const before = await balances(t.url, apiKey);
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_rep-tiny', prompt: 'big' });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(await failureAudiences(t, task, accountWords.unusable), /larger than 100 bytes/);
    assert.deepEqual(await balances(t.url, apiKey), before);
  });

  it('an output that stalls past outputTimeoutMs fails with code 1, refunded', async () => {
    const before = await balances(t.url, apiKey);
    const hold = standin.http.stallBody((r) => r.path.startsWith('/files/'));
    try {
      const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_rep-slow', prompt: 'slow' });
      await hold.reached;
      const task = await waitForTask(t.url, apiKey, taskId);
      assert.equal(task.finishCode, FinishCode.EngineFailure);
      assert.match(
        await failureAudiences(t, task, accountWords.unusable),
        /not downloaded within 300 ms/,
      );
      assert.deepEqual(await balances(t.url, apiKey), before);
    } finally {
      hold.release();
    }
  });
});
