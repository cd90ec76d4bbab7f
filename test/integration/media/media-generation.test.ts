import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import {
  audioMs,
  download,
  ffmpeg,
  gqlOk,
  probe,
  testPicture,
  testTone,
  uploadOk,
} from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

/** ffmpeg processes started by this process (the app under test runs in it). */
/** The ffmpeg processes this test process runs that encode frames of `size` ("1920x1080"). */
async function ffmpegChildren(size: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)('ps', [
    '-o',
    'pid=,ppid=,args=',
    '--ppid',
    String(process.pid),
  ]);
  return stdout.split('\n').filter((line) => /ffmpeg/.test(line) && line.includes(` -s ${size} `));
}

type Kind = 'Image' | 'Video' | 'Speech' | 'AvatarVideo';

function submit(url: string, apiKey: string, kind: Kind, input: Record<string, unknown>) {
  return graphql<Record<string, { contentId: string; taskId: string }>>(url, {
    query: `mutation S($input: Generate${kind}Input!) { generate${kind}(input: $input) { contentId taskId } }`,
    variables: { input },
    apiKey,
  });
}

/** Submits, waits for success and downloads the one media file. */
async function generate(url: string, apiKey: string, kind: Kind, input: Record<string, unknown>) {
  const res = await submit(url, apiKey, kind, input);
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  const { contentId, taskId } = res.body.data![`generate${kind}`]!;
  const task = await waitForTask(url, apiKey, taskId, undefined, 60_000);
  assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
  const { getContent } = await gqlOk<{
    getContent: {
      media: {
        mediaId: string;
        mimeType: string;
        durationMs: number | null;
        width: number | null;
      }[];
      creditsCharged: number;
    };
  }>(
    url,
    apiKey,
    'query C($id: ID!) { getContent(contentId: $id) { creditsCharged media { mediaId mimeType durationMs width } } }',
    { id: contentId },
  );
  assert.equal(getContent.media.length, 1);
  const media = getContent.media[0]!;
  return {
    media,
    bytes: await download(url, apiKey, media.mediaId),
    credits: getContent.creditsCharged,
  };
}

/** One frame at `seconds`, as raw RGB. */
async function frameAt(video: Buffer, seconds: number): Promise<Buffer> {
  const png = await ffmpeg.run({
    args: [
      '-i',
      'pipe:0',
      '-ss',
      String(seconds),
      '-frames:v',
      '1',
      '-f',
      'image2pipe',
      '-vcodec',
      'png',
      'pipe:1',
    ],
    stdin: video,
  });
  return sharp(png).removeAlpha().raw().toBuffer();
}

const meanDifference = (a: Buffer, b: Buffer) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
};

describeEachBackend('speech, video and talking avatars over HTTP', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, { env: { WORKER_CONCURRENCY: '2' } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('speech: real audio in each format, longer for a longer text, priced per character', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } });
    const text = 'The harbour is quiet tonight, and the boats are home.';
    const short = await generate(t.url, apiKey, 'Speech', {
      modelId: 'mdl_atelier-voice',
      voiceModelId: 'voc_en-gb',
      text,
      format: 'wav',
    });
    const long = await generate(t.url, apiKey, 'Speech', {
      modelId: 'mdl_atelier-voice',
      voiceModelId: 'voc_en-gb',
      text: `${text} ${text} ${text}`,
      format: 'mp3',
    });
    const opus = await generate(t.url, apiKey, 'Speech', {
      modelId: 'mdl_atelier-voice',
      voiceModelId: 'voc_de',
      text: 'Guten Abend.',
      format: 'ogg',
    });
    const [wav, mp3, ogg] = await Promise.all([
      probe(short.bytes),
      probe(long.bytes),
      probe(opus.bytes),
    ]);
    assert.equal(wav.streams[0]?.codec, 'pcm_s16le');
    assert.equal(mp3.streams[0]?.codec, 'mp3');
    assert.equal(ogg.streams[0]?.codec, 'opus');
    assert.equal(short.media.mimeType, 'audio/wav');
    assert.equal(long.media.mimeType, 'audio/mpeg');
    assert.equal(opus.media.mimeType, 'audio/ogg');
    const [shortMs, longMs] = [await audioMs(short.bytes), await audioMs(long.bytes)];
    assert.ok(shortMs > 2000, `${shortMs}`);
    assert.ok(longMs > 2.5 * shortMs, `${longMs} vs ${shortMs}`);
    assert.ok(Math.abs(short.media.durationMs! - shortMs) < 100);
    // 1 credit per started 100 characters.
    assert.equal(short.credits, 1);
    assert.equal(long.credits, Math.ceil((text.length * 3 + 2) / 100));
  });

  it('text-to-video: H.264 MP4 of the requested duration, size and fps, priced per second', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const { bytes, media, credits } = await generate(t.url, apiKey, 'Video', {
      modelId: 'mdl_atelier-motion',
      prompt: 'lanterns drifting over a night lake',
      resolution: '480p',
      aspectRatio: '16:9',
      durationSeconds: 3,
      fps: 30,
      elementIds: ['elm_cat'],
    });
    const info = await probe(bytes);
    const video = info.streams.find((s) => s.type === 'video')!;
    assert.equal(video.codec, 'h264');
    assert.deepEqual([video.width, video.height, video.fps], [854, 480, 30]);
    assert.ok(Math.abs(video.durationMs! - 3000) <= 100, `${video.durationMs}`);
    assert.equal(media.mimeType, 'video/mp4');
    assert.equal(credits, 6);
    assert.ok(
      meanDifference(await frameAt(bytes, 0), await frameAt(bytes, 2.5)) > 1,
      'the scene moves',
    );
  });

  it('image-to-video: camera motion over an uploaded image, with an own element', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const image = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/jpeg',
      bytes: await testPicture(640, 480, 'jpeg'),
    });
    const elementImage = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(128, 128),
    });
    const { createElement } = await gqlOk<{ createElement: { elementId: string } }>(
      t.url,
      apiKey,
      'mutation E($input: CreateElementInput!) { createElement(input: $input) { elementId } }',
      { input: { kind: 'object', name: 'badge', mediaId: elementImage } },
    );
    const { bytes } = await generate(t.url, apiKey, 'Video', {
      modelId: 'mdl_atelier-motion',
      prompt: 'slow push in',
      imageMediaId: image,
      resolution: '480p',
      aspectRatio: '1:1',
      durationSeconds: 2,
      elementIds: [createElement.elementId],
    });
    const video = (await probe(bytes)).streams.find((s) => s.type === 'video')!;
    assert.deepEqual([video.codec, video.width, video.height, video.fps], ['h264', 480, 480, 24]);
    assert.ok(Math.abs(video.durationMs! - 2000) <= 100);
    assert.ok(
      meanDifference(await frameAt(bytes, 0), await frameAt(bytes, 1.9)) > 1,
      'the camera moves',
    );
  });

  it('talking avatar from a script: video and audio of one length, the mouth moves', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const portrait = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(400, 400),
    });
    const { createAvatar } = await gqlOk<{ createAvatar: { avatarId: string } }>(
      t.url,
      apiKey,
      'mutation A($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
      { input: { name: 'Ada', portraitMediaId: portrait, voiceModelId: 'voc_en-us' } },
    );
    const script = 'Hello there. Welcome to the studio, where everything is made on this machine.';
    const { bytes, credits } = await generate(t.url, apiKey, 'AvatarVideo', {
      modelId: 'mdl_atelier-avatar',
      avatarId: createAvatar.avatarId,
      script,
      resolution: '512p',
    });
    const info = await probe(bytes);
    const video = info.streams.find((s) => s.type === 'video')!;
    const audio = info.streams.find((s) => s.type === 'audio')!;
    assert.deepEqual(
      [video.codec, audio.codec, video.width, video.height],
      ['h264', 'aac', 512, 512],
    );
    assert.ok(video.durationMs! > 2000);
    assert.ok(
      Math.abs(video.durationMs! - audio.durationMs!) <= 100,
      `${video.durationMs} vs ${audio.durationMs}`,
    );
    assert.equal(credits, Math.ceil(script.length / 15));
    // Somewhere in the speech the frame differs from the first (closed-mouth) frame.
    const first = await frameAt(bytes, 0);
    const differences = [];
    for (const at of [0.5, 1, 1.5, 2])
      differences.push(meanDifference(first, await frameAt(bytes, at)));
    assert.ok(Math.max(...differences) > 0.05, JSON.stringify(differences));
  });

  it('talking avatar from an uploaded audio: as long as the audio', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const portrait = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(300, 400),
    });
    const audio = await uploadOk(t.url, apiKey, {
      kind: 'audio',
      mimeType: 'audio/mpeg',
      bytes: await testTone(1, 'mp3'),
    });
    const { createAvatar } = await gqlOk<{ createAvatar: { avatarId: string } }>(
      t.url,
      apiKey,
      'mutation A($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
      { input: { name: 'Bo', portraitMediaId: portrait } },
    );
    const { bytes, credits } = await generate(t.url, apiKey, 'AvatarVideo', {
      modelId: 'mdl_atelier-avatar',
      avatarId: createAvatar.avatarId,
      audioMediaId: audio,
    });
    const info = await probe(bytes);
    const video = info.streams.find((s) => s.type === 'video')!;
    const sound = info.streams.find((s) => s.type === 'audio')!;
    assert.ok(Math.abs(video.durationMs! - 2000) <= 150, `${video.durationMs}`);
    assert.ok(Math.abs(video.durationMs! - sound.durationMs!) <= 100);
    assert.equal(credits, 2);
    // Loud first second, silent second: the mouth is open in the first and closed in the second.
    assert.ok(meanDifference(await frameAt(bytes, 0.5), await frameAt(bytes, 1.7)) > 0.05);
  });

  it('an avatar or element deleted after submission does not fail the generations naming it', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const picture = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(),
    });
    const { createAvatar, createElement } = await gqlOk<{
      createAvatar: { avatarId: string };
      createElement: { elementId: string };
    }>(
      t.url,
      apiKey,
      `mutation M($a: CreateAvatarInput!, $e: CreateElementInput!) {
        createAvatar(input: $a) { avatarId } createElement(input: $e) { elementId } }`,
      {
        a: { name: 'Dee', portraitMediaId: picture },
        e: { kind: 'object', name: 'pin', mediaId: picture },
      },
    );
    const avatar = await submit(t.url, apiKey, 'AvatarVideo', {
      modelId: 'mdl_atelier-avatar',
      avatarId: createAvatar.avatarId,
      script: 'Still here.',
    });
    const video = await submit(t.url, apiKey, 'Video', {
      modelId: 'mdl_atelier-motion',
      prompt: 'x',
      resolution: '480p',
      aspectRatio: '1:1',
      durationSeconds: 1,
      elementIds: [createElement.elementId],
    });
    await gqlOk(
      t.url,
      apiKey,
      'mutation D($a: ID!, $e: ID!) { deleteAvatar(avatarId: $a) deleteElement(elementId: $e) }',
      {
        a: createAvatar.avatarId,
        e: createElement.elementId,
      },
    );
    for (const res of [avatar, video]) {
      const { taskId } = Object.values(res.body.data!)[0]!;
      const task = await waitForTask(t.url, apiKey, taskId, undefined, 60_000);
      assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    }
  });

  it('cancelling a running video kills its ffmpeg at once, refunds, and stores nothing', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    // The file's two backend suites run side by side in this process, and both cancel a video
    // here: each encodes a frame size of its own and looks only at the ffmpeg encoding it.
    const [format, size] =
      backend === 'pglite'
        ? [{ resolution: '1080p', aspectRatio: '16:9', durationSeconds: 5 }, '1920x1080']
        : [{ resolution: '720p', aspectRatio: '9:16', durationSeconds: 10 }, '720x1280'];
    const res = await submit(t.url, apiKey, 'Video', {
      modelId: 'mdl_atelier-motion',
      prompt: 'a long slow night',
      ...format,
    });
    const { taskId } = res.body.data!.generateVideo!;
    await waitForTask(t.url, apiKey, taskId, (task) => task.status === 'running');
    // Let the encoder start.
    const deadline = Date.now() + 5000;
    while ((await ffmpegChildren(size)).length === 0 && Date.now() < deadline) await sleep(50);
    assert.ok((await ffmpegChildren(size)).length > 0, 'ffmpeg is running');
    const cancelled = await gqlOk<{ cancelTask: { finishCode: number } }>(
      t.url,
      apiKey,
      'mutation X($id: ID!) { cancelTask(taskId: $id) { finishCode } }',
      { id: taskId },
    );
    assert.equal(cancelled.cancelTask.finishCode, FinishCode.Cancelled);
    const gone = Date.now() + 3000;
    while ((await ffmpegChildren(size)).length > 0 && Date.now() < gone) await sleep(50);
    assert.deepEqual(await ffmpegChildren(size), [], 'no ffmpeg left behind');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 });
    const media = await database.db
      .selectFrom('media')
      .select('id')
      .where('account_id', '=', account.id)
      .execute();
    assert.deepEqual(media, []);
  });

  it('bad inputs are refused before any charge', async () => {
    const owner = await seedAccount(t.app, { credits: { standard: 100 } });
    const other = await seedAccount(t.app, { credits: { standard: 100 } });
    const portrait = await uploadOk(t.url, owner.apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(),
    });
    const audio = await uploadOk(t.url, owner.apiKey, {
      kind: 'audio',
      mimeType: 'audio/wav',
      bytes: await testTone(0.5),
    });
    const { createAvatar } = await gqlOk<{ createAvatar: { avatarId: string } }>(
      t.url,
      owner.apiKey,
      'mutation A($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
      { input: { name: 'Cy', portraitMediaId: portrait } },
    );
    const refused: [string, Kind, Record<string, unknown>, string][] = [
      [
        'unknown voice',
        'Speech',
        { modelId: 'mdl_atelier-voice', voiceModelId: 'voc_nope', text: 'hi' },
        '140004',
      ],
      [
        'empty text',
        'Speech',
        { modelId: 'mdl_atelier-voice', voiceModelId: 'voc_en-gb', text: '   ' },
        '120001',
      ],
      [
        'speed out of range',
        'Speech',
        { modelId: 'mdl_atelier-voice', voiceModelId: 'voc_en-gb', text: 'hi', speed: 5 },
        '120002',
      ],
      [
        "another account's avatar",
        'AvatarVideo',
        { modelId: 'mdl_atelier-avatar', avatarId: createAvatar.avatarId, script: 'hi' },
        '140004',
      ],
      [
        "another account's upload",
        'Video',
        { modelId: 'mdl_atelier-motion', prompt: 'x', imageMediaId: portrait },
        '140004',
      ],
      [
        'an audio as the image',
        'Video',
        { modelId: 'mdl_atelier-motion', prompt: 'x', imageMediaId: audio },
        '120001',
      ],
      [
        '1080p for 10 seconds',
        'Video',
        { modelId: 'mdl_atelier-motion', prompt: 'x', resolution: '1080p', durationSeconds: 10 },
        '120002',
      ],
      [
        '720p at 60 fps',
        'Video',
        { modelId: 'mdl_atelier-motion', prompt: 'x', resolution: '720p', fps: 60 },
        '120002',
      ],
      [
        '4K',
        'Video',
        { modelId: 'mdl_atelier-motion', prompt: 'x', resolution: '2160p' },
        '120002',
      ],
      [
        'script and audio at once',
        'AvatarVideo',
        {
          modelId: 'mdl_atelier-avatar',
          avatarId: createAvatar.avatarId,
          script: 'hi',
          audioMediaId: audio,
        },
        '120001',
      ],
      [
        'a speech model for video',
        'Video',
        { modelId: 'mdl_atelier-voice', prompt: 'x' },
        '120001',
      ],
    ];
    for (const [what, kind, input, code] of refused) {
      // The "another account's" cases are sent by `other`, naming the owner's things.
      const apiKey = what.startsWith('another') ? other.apiKey : owner.apiKey;
      const res = await submit(t.url, apiKey, kind, input);
      assert.deepEqual(errorCodes(res), [code], `${what}: ${JSON.stringify(res.body.errors)}`);
    }
    assert.deepEqual(await balances(t.url, owner.apiKey), { standard: 100 });
    assert.deepEqual(await balances(t.url, other.apiKey), { standard: 100 });
    const contents = await database.db
      .selectFrom('contents')
      .select('id')
      .where('account_id', 'in', [owner.account.id, other.account.id])
      .execute();
    assert.deepEqual(contents, []);
  });

  it('estimateCost prices every kind by the same rules', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 5 } });
    const estimate = (kind: string, input: Record<string, unknown>) =>
      gqlOk<{ estimateCost: { credits: number; affordable: boolean } }>(
        t.url,
        apiKey,
        'query E($input: CostEstimateInput!) { estimateCost(input: $input) { credits affordable } }',
        { input: { kind, input } },
      );
    assert.deepEqual(
      (await estimate('video', { modelId: 'mdl_atelier-motion', prompt: 'x', durationSeconds: 4 }))
        .estimateCost,
      { credits: 8, affordable: false },
    );
    assert.deepEqual(
      (
        await estimate('speech', {
          modelId: 'mdl_atelier-voice',
          voiceModelId: 'voc_en-gb',
          text: 'x'.repeat(250),
        })
      ).estimateCost,
      { credits: 3, affordable: true },
    );
    assert.deepEqual(
      (
        await estimate('avatar', {
          modelId: 'mdl_atelier-avatar',
          avatarId: 'ava_x',
          script: 'y'.repeat(31),
        })
      ).estimateCost,
      { credits: 3, affordable: true },
    );
  });
});
