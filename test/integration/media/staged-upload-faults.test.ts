import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import type { Actor } from '../../../src/domain/actor.ts';
import { measureAudio } from '../../../src/engines/speech/audio.ts';
import { UploadService } from '../../../src/services/upload.service.ts';
import { systemClock } from '../../../src/shared/clock.ts';
import { newId } from '../../../src/shared/ids.ts';
import { LocalMediaStorage } from '../../../src/storage/media-storage.ts';
import { UrlSigner } from '../../../src/storage/url-signer.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { findMedia } from '../../../src/store/media.store.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { ffmpeg, testPicture } from '../../helpers/media.ts';

/**
 * A media store that takes presigned uploads and can be told to fail its next write of a
 * checked file: a fault injected on purpose (a bucket briefly unreachable), not a stand-in
 * for the bucket, which object-storage.test.ts drives for real through s3rver.
 */
class FaultyStorage extends LocalMediaStorage {
  failNextWrite = false;

  override async put(key: string, bytes: Buffer): Promise<void> {
    if (key.startsWith('uploads/') && this.failNextWrite) {
      this.failNextWrite = false;
      throw new Error('the store is unreachable (injected)');
    }
    await super.put(key, bytes);
  }

  override async presignedPut(key: string): Promise<string> {
    return `test://staging/${key}`; // the test writes the client's bytes itself
  }
}

describeEachBackend('a staged upload whose check cannot finish', (backend) => {
  let database: Database;
  let storage: FaultyStorage;
  let uploads: UploadService;
  let root: string;
  before(async () => {
    database = await createTestDatabase(backend);
    root = mkdtempSync(path.join(tmpdir(), 'atelier-staged-'));
    storage = new FaultyStorage(root);
    uploads = new UploadService({
      db: database.db,
      signer: new UrlSigner({
        key: Buffer.alloc(32, 7),
        publicUrl: 'http://127.0.0.1',
        clock: systemClock,
        ttlMs: 60_000,
      }),
      storage,
      probe: { audioDurationMs: (bytes, signal) => measureAudio(ffmpeg, bytes, signal) },
      clock: systemClock,
      limits: {
        maxBytes: 1024 * 1024,
        maxImagePixels: 4096,
        maxAudioSeconds: 60,
        urlTtlMs: 60_000,
      },
      direct: true,
    });
  });
  after(async () => {
    await database.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('keeps the bytes in staging and the upload pending, and completes it on the next use', async () => {
    const account = await insertAccount(database.db, {
      id: newId('acc'),
      alias: `staged-${Date.now()}`,
      role: 'user',
      apiKeyAccess: true,
    });
    const actor: Actor = {
      accountId: account.id,
      role: 'user',
      credential: { kind: 'api_key', apiKeyId: 'key_test' },
    };
    const picture = await testPicture(48, 48);
    const upload = await uploads.create(actor, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture.length,
    });
    const staged = (await findMedia(database.db, upload.mediaId))!.storage_key;
    await storage.put(staged, picture); // the client's PUT to the bucket

    storage.failNextWrite = true;
    await assert.rejects(
      uploads.readyMedia(account.id, [upload.mediaId], 'mediaId'),
      /unreachable \(injected\)/,
    );
    assert.equal((await findMedia(database.db, upload.mediaId))?.state, 'pending');
    assert.equal(await storage.exists(staged), true, 'the client’s bytes are not lost');

    const [ready] = await uploads.readyMedia(account.id, [upload.mediaId], 'mediaId');
    assert.equal(ready?.state, 'ready');
    assert.equal(await storage.exists(staged), false, 'staging is emptied once settled');
    assert.deepEqual(await storage.get(ready!.storage_key), picture);
  });
});
