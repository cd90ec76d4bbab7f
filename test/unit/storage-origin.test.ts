import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { S3Config } from '../../src/config/deployment.ts';
import { bucketOrigin, storageOrigins } from '../../src/edge/ui/storage-origin.ts';
import { S3MediaStorage } from '../../src/storage/s3-media-storage.ts';

// The console's Content-Security-Policy names the bucket's origin so a browser may PUT an
// upload to a presigned URL there (issue 33). That origin must be the one the AWS SDK signs
// URLs for, or every upload from the console is blocked: each configuration below is signed
// by the SDK (locally: signing sends nothing) and compared.

const base: S3Config = {
  bucket: 'media',
  region: 'eu-west-3',
  endpoint: null,
  forcePathStyle: false,
  prefix: '',
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'secret',
  directUploads: true,
};

const configurations: Partial<S3Config>[] = [
  {},
  { region: 'us-east-1' },
  { region: 'cn-north-1' },
  { forcePathStyle: true },
  { bucket: 'my.media' },
  { endpoint: 'http://127.0.0.1:9000' },
  { endpoint: 'http://127.0.0.1:9000', forcePathStyle: true },
  { endpoint: 'http://[::1]:9000' },
  { endpoint: 'http://localhost:9000' },
  { endpoint: 'https://minio.example.com:9000/' },
  { endpoint: 'https://store.example.com/some/path' },
  { endpoint: 'https://store.example.com', bucket: 'my.media' },
  { endpoint: 'http://store.example.com', bucket: 'my.media' },
  { endpoint: 'https://account.r2.cloudflarestorage.com', prefix: 'atelier/' },
];

describe('the bucket origin a browser uploads to', () => {
  for (const change of configurations) {
    it(`is where the SDK signs a PUT for ${JSON.stringify(change)}`, async () => {
      const config = { ...base, ...change };
      const storage = new S3MediaStorage(config);
      try {
        const url = await storage.presignedPut('staging/acc_x/med_y', {
          expiresAt: new Date(Date.now() + 60_000),
          bytes: 10,
        });
        assert.equal(bucketOrigin(config), new URL(url).origin);
      } finally {
        storage.close();
      }
    });
  }

  it('is allowed to connect to only when uploads go there', () => {
    assert.deepEqual(storageOrigins({ kind: 'local' }), { connect: [], media: [] });
    const s3 = { ...base, endpoint: 'http://127.0.0.1:9000' };
    assert.deepEqual(storageOrigins({ kind: 's3', s3 }), {
      connect: ['http://127.0.0.1:9000'],
      media: ['http://127.0.0.1:9000'],
    });
    assert.deepEqual(storageOrigins({ kind: 's3', s3: { ...s3, directUploads: false } }), {
      connect: [],
      media: ['http://127.0.0.1:9000'],
    });
  });
});
