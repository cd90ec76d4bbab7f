import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/config.ts';
import type { S3Config } from '../../../src/config/deployment.ts';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { LocalMediaStorage } from '../../../src/storage/media-storage.ts';
import { S3MediaStorage } from '../../../src/storage/s3-media-storage.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { createUpload, download, testPicture, upload } from '../../helpers/media.ts';
import { startS3, type TestS3 } from '../../helpers/s3.ts';
import { seedAccount } from '../../helpers/seed.ts';

let s3: TestS3;
before(async () => {
  s3 = await startS3();
});
after(() => s3.close());

const storageConfig = (): S3Config => {
  const config = loadConfig({ env: s3.env, cwd: '/' }).mediaStore;
  assert.equal(config.kind, 's3');
  return config.s3;
};

describe('the S3 media store', () => {
  it('puts, gets, finds and removes objects, under its prefix', async () => {
    const storage = new S3MediaStorage({ ...storageConfig(), prefix: 'tenant-a/' });
    const bytes = Buffer.from('an object');
    await storage.put('acc_1/cnt_1/0.png', bytes);
    assert.deepEqual(await storage.get('acc_1/cnt_1/0.png'), bytes);
    assert.equal(await storage.exists('acc_1/cnt_1/0.png'), true);
    const unprefixed = new S3MediaStorage(storageConfig());
    assert.equal(
      await unprefixed.exists('acc_1/cnt_1/0.png'),
      false,
      'the prefix is part of the key',
    );
    await storage.remove('acc_1/cnt_1/0.png');
    assert.equal(await storage.exists('acc_1/cnt_1/0.png'), false);
    await assert.rejects(storage.put('../escape', bytes), /Unsafe storage key/);
    storage.close();
    unprefixed.close();
  });

  it('stores a large video in parts and reads it back whole', async () => {
    const storage = new S3MediaStorage(storageConfig());
    const big = Buffer.alloc(19 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
    await storage.put('acc_1/cnt_2/0.mp4', big);
    assert.ok((await storage.get('acc_1/cnt_2/0.mp4')).equals(big));
    storage.close();
  });

  it('presigns a GET that names the file and type and expires when asked', async () => {
    const storage = new S3MediaStorage(storageConfig());
    await storage.put('acc_1/cnt_3/0.png', Buffer.from('png bytes'));
    const expiresAt = new Date(Date.now() + 120_000);
    const url = new URL(
      await storage.presignedGet('acc_1/cnt_3/0.png', {
        expiresAt,
        filename: 'result.png',
        mimeType: 'image/png',
      }),
    );
    const seconds = Number(url.searchParams.get('X-Amz-Expires'));
    assert.ok(seconds >= 119 && seconds <= 120, `expires in ${seconds} s`);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="result.png"');
    assert.equal(await res.text(), 'png bytes');
    storage.close();
  });

  it('presigns a PUT of an exact length that the store refuses once expired', async () => {
    const storage = new S3MediaStorage(storageConfig());
    // A whole second 2 to 3 s ahead, as createUpload makes them.
    const soon = new Date((Math.floor(Date.now() / 1000) + 3) * 1000);
    const url = await storage.presignedPut('staging/acc_1/med_1', { expiresAt: soon, bytes: 5 });
    const signed = new URL(url);
    assert.match(String(signed.searchParams.get('X-Amz-SignedHeaders')), /content-length/);
    assert.match(String(signed.searchParams.get('X-Amz-Expires')), /^[23]$/);
    assert.equal((await fetch(url, { method: 'PUT', body: 'early' })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, soon.getTime() - Date.now() + 1200));
    assert.equal((await fetch(url, { method: 'PUT', body: 'late!' })).status, 403);
    assert.equal((await storage.get('staging/acc_1/med_1')).toString(), 'early');
    storage.close();
  });

  it('reads an object only when it is small enough, and says when there is none', async () => {
    const local = new LocalMediaStorage(mkdtempSync(path.join(tmpdir(), 'atelier-media-')));
    for (const storage of [new S3MediaStorage(storageConfig()), local]) {
      await storage.put('staging/acc_1/med_2', Buffer.from('0123456789'));
      assert.deepEqual(await storage.getAtMost('staging/acc_1/med_2', 10), {
        size: 10,
        bytes: Buffer.from('0123456789'),
      });
      assert.deepEqual(await storage.getAtMost('staging/acc_1/med_2', 9), {
        size: 10,
        bytes: null,
      });
      assert.equal(await storage.getAtMost('staging/acc_1/none', 10), null);
      if (storage instanceof S3MediaStorage) storage.close();
    }
  });

  it('refuses an incomplete configuration with every problem named', () => {
    assert.throws(
      () => loadConfig({ env: { MEDIA_STORE: 's3', S3_ACCESS_KEY_ID: 'x' }, cwd: '/' }),
      (error: Error) =>
        /S3_BUCKET: required with MEDIA_STORE=s3/.test(error.message) &&
        /give both, or neither/.test(error.message),
    );
  });
});

describeEachBackend('media on the object store', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, { env: { MODELS: testModels, ...s3.env } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('a result downloads through its signed URL, redirected to a presigned one that expires with it', async () => {
    const { apiKey } = await seedAccount(t.app);
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'to the bucket',
    });
    assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, FinishCode.Ok);
    const content = await graphql<{
      getContent: {
        media: Array<{ mimeType: string; download: { url: string; expiresAt: string } }>;
      };
    }>(t.url, {
      query:
        'query C($id: ID!) { getContent(contentId: $id) { media { mimeType download { url expiresAt } } } }',
      variables: { id: contentId },
      apiKey,
    });
    assert.deepEqual(errorCodes(content), []);
    const [media] = content.body.data!.getContent.media;
    const { url, expiresAt } = media!.download;
    const first = await fetch(url, { redirect: 'manual' });
    assert.equal(first.status, 302);
    const location = new URL(first.headers.get('location')!);
    assert.equal(location.origin, s3.endpoint, 'served by the object store, not the API');
    const expiresIn = Number(location.searchParams.get('X-Amz-Expires'));
    const remaining = (Date.parse(expiresAt) - Date.now()) / 1000;
    assert.ok(Math.abs(expiresIn - remaining) <= 2, `${expiresIn} s vs ${remaining} s`);
    const file = await fetch(url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), media!.mimeType);
    const bytes = Buffer.from(await file.arrayBuffer());
    assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG');

    const tampered = await fetch(`${url}0`, { redirect: 'manual' });
    assert.equal(tampered.status, 403, 'a bad signature never reaches the bucket');
  });

  const put = (url: string, bytes: Buffer) =>
    fetch(url, { method: 'PUT', body: new Uint8Array(bytes) });
  const mediaRow = (id: string) =>
    database.db.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirst();
  const createElement = (app: TestApp, apiKey: string, mediaId: string) =>
    graphql<{ createElement: { elementId: string } }>(app.url, {
      query:
        'mutation E($input: CreateElementInput!) { createElement(input: $input) { elementId } }',
      variables: { input: { kind: 'object', name: 'from the bucket', mediaId } },
      apiKey,
    });

  it('an upload goes straight to the bucket, is checked at its first use, and leaves staging', async () => {
    const { apiKey, account } = await seedAccount(t.app);
    const picture = await testPicture(96, 64);
    const upload = await createUpload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture.length,
    });
    const url = new URL(upload.uploadUrl);
    assert.equal(url.origin, s3.endpoint, 'the bytes never pass through Atelier');
    assert.equal(url.pathname, `/${s3.bucket}/staging/${account.id}/${upload.mediaId}`);
    const expiresIn = Number(url.searchParams.get('X-Amz-Expires'));
    const remaining = (Date.parse(upload.expiresAt) - Date.now()) / 1000;
    assert.ok(Math.abs(expiresIn - remaining) <= 2, `${expiresIn} s vs ${remaining} s`);
    assert.match(String(url.searchParams.get('X-Amz-SignedHeaders')), /content-length/);
    for (const name of url.searchParams.keys())
      assert.doesNotMatch(name, /checksum/i, 'no checksum of an empty body is signed in');

    assert.equal((await put(upload.uploadUrl, picture)).status, 200);
    assert.equal((await mediaRow(upload.mediaId))?.state, 'pending', 'not checked yet');

    // The first use checks the bytes and moves them out of staging.
    assert.ok((await download(t.url, apiKey, upload.mediaId)).equals(picture));
    const row = await mediaRow(upload.mediaId);
    assert.equal(row?.state, 'ready');
    assert.deepEqual([row?.mime_type, row?.width, row?.height], ['image/png', 96, 64]);
    assert.deepEqual(await s3.keys(`staging/${account.id}/`), []);
    assert.deepEqual(await s3.keys(`uploads/${account.id}/`), [row!.storage_key]);

    // The presigned URL is still valid, but what it writes now is never used.
    const other = await testPicture(96, 64, 'jpeg');
    assert.equal((await put(upload.uploadUrl, other)).status, 200);
    assert.ok((await download(t.url, apiKey, upload.mediaId)).equals(picture));
    assert.equal((await createElement(t, apiKey, upload.mediaId)).status, 200);
    assert.equal((await mediaRow(upload.mediaId))?.storage_key, row!.storage_key);
  });

  it('staged bytes that fail the checks are refused at first use, saying why, and may be put again', async () => {
    const { apiKey, account } = await seedAccount(t.app);
    const picture = await testPicture(80, 80);
    const upload = await createUpload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture.length,
    });
    // Nothing arrived yet: the media does not exist for its account.
    assert.deepEqual(errorCodes(await createElement(t, apiKey, upload.mediaId)), ['140004']);

    const text = Buffer.alloc(picture.length, 'not a picture ');
    assert.equal((await put(upload.uploadUrl, text)).status, 200, 'the bucket checks nothing');
    const refused = await createElement(t, apiKey, upload.mediaId);
    assert.deepEqual(errorCodes(refused), ['120001']);
    const error = refused.body.errors![0]!;
    assert.equal(error.extensions?.field, 'mediaId');
    assert.match(error.message, /was refused: the bytes are of no recognised type, not image/);
    assert.equal((await mediaRow(upload.mediaId))?.state, 'pending');
    assert.deepEqual(await s3.keys(`staging/${account.id}/`), [], 'refused bytes are removed');
    assert.deepEqual(await s3.keys(`uploads/${account.id}/`), []);

    // A body longer than declared. S3 refuses it (Content-Length is signed); this emulator
    // checks no signature, which lets the check at first use show that it holds regardless.
    assert.equal((await put(upload.uploadUrl, Buffer.concat([picture, picture]))).status, 200);
    const tooLong = await createElement(t, apiKey, upload.mediaId);
    assert.match(tooLong.body.errors![0]!.message, /bytes arrived; createUpload declared/);

    assert.equal((await put(upload.uploadUrl, picture)).status, 200);
    assert.deepEqual(errorCodes(await createElement(t, apiKey, upload.mediaId)), []);
    assert.equal((await mediaRow(upload.mediaId))?.state, 'ready');
  });

  it('two nodes using the same staged upload at once check it into one file', async (ctx) => {
    const second = await startTestApp(database, { env: { MODELS: testModels, ...s3.env } });
    ctx.after(() => second.close());
    const { apiKey, account } = await seedAccount(t.app);
    const picture = await testPicture(128, 128);
    const upload = await createUpload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture.length,
    });
    assert.equal((await put(upload.uploadUrl, picture)).status, 200);
    const uses = await Promise.all(
      [t, second, t, second].map((app) => createElement(app, apiKey, upload.mediaId)),
    );
    for (const use of uses) assert.deepEqual(errorCodes(use), []);
    const row = await mediaRow(upload.mediaId);
    assert.deepEqual(await s3.keys(`uploads/${account.id}/`), [row!.storage_key]);
    assert.ok((await download(t.url, apiKey, upload.mediaId)).equals(picture));
  });

  it('with S3_DIRECT_UPLOADS=false an upload is checked by Atelier on arrival and lands in the bucket', async (ctx) => {
    const viaApi = await startTestApp(database, {
      env: { ...s3.env, S3_DIRECT_UPLOADS: 'false' },
    });
    ctx.after(() => viaApi.close());
    const { apiKey } = await seedAccount(viaApi.app);
    const picture = await testPicture(96, 64);
    const outcome = await upload(viaApi.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture,
    });
    assert.equal(new URL(outcome.uploadUrl).origin, viaApi.url);
    assert.equal(outcome.status, 200);
    assert.equal(outcome.body.media?.width, 96);
    const row = await mediaRow(outcome.mediaId);
    const bucket = new S3MediaStorage(storageConfig());
    assert.equal(await bucket.exists(row!.storage_key), true, 'the object is in the bucket');
    bucket.close();
    assert.ok((await download(viaApi.url, apiKey, outcome.mediaId)).equals(picture));
  });

  it('expired uploads are swept: staged bytes that arrived in time become usable, the rest is forgotten', async (ctx) => {
    const clock = new TestClock();
    const node = await startTestApp(database, {
      clock,
      env: { ...s3.env, WORKER_CONCURRENCY: '0', UPLOAD_URL_TTL_SECONDS: '60' },
    });
    ctx.after(() => node.close());
    const { apiKey, account } = await seedAccount(node.app);
    const picture = await testPicture(64, 64);
    const image = { kind: 'image', mimeType: 'image/png', bytes: picture.length } as const;
    const arrived = await createUpload(node.url, apiKey, image);
    const garbage = await createUpload(node.url, apiKey, image);
    const never = await createUpload(node.url, apiKey, image);
    assert.equal((await put(arrived.uploadUrl, picture)).status, 200);
    assert.equal((await put(garbage.uploadUrl, Buffer.alloc(picture.length))).status, 200);

    const { uploads } = node.app.services;
    assert.deepEqual(
      await uploads.sweepExpired(),
      { completed: 0, dropped: 0, failed: 0 },
      'not expired yet',
    );
    clock.advance(60_000 + 10 * 60_000 + 1000); // past the URL and the grace for late PUTs
    const swept = await uploads.sweepExpired();
    assert.ok(swept.completed >= 1 && swept.dropped >= 2, JSON.stringify(swept));
    assert.equal(swept.failed, 0);

    assert.equal((await mediaRow(arrived.mediaId))?.state, 'ready');
    assert.equal(await mediaRow(garbage.mediaId), undefined);
    assert.equal(await mediaRow(never.mediaId), undefined);
    assert.deepEqual(await s3.keys(`staging/${account.id}/`), []);
    assert.deepEqual(errorCodes(await createElement(node, apiKey, arrived.mediaId)), []);
  });
});
