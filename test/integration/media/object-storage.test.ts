import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/config.ts';
import type { S3Config } from '../../../src/config/deployment.ts';
import { S3MediaStorage } from '../../../src/storage/s3-media-storage.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { download, testPicture, uploadOk } from '../../helpers/media.ts';
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
    assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, 0);
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

  it('an upload lands in the bucket and downloads whole', async () => {
    const { apiKey } = await seedAccount(t.app);
    const picture = await testPicture(96, 64);
    const mediaId = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture,
    });
    const [row] = await database.db
      .selectFrom('media')
      .select('storage_key')
      .where('id', '=', mediaId)
      .execute();
    const bucket = new S3MediaStorage(storageConfig());
    assert.equal(await bucket.exists(row!.storage_key), true, 'the object is in the bucket');
    bucket.close();
    assert.ok((await download(t.url, apiKey, mediaId)).equals(picture));
  });
});
