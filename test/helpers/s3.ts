import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** A local S3-compatible server (s3rver) with one empty bucket, and the app settings for it. */
export interface TestS3 {
  readonly endpoint: string;
  readonly bucket: string;
  /** What Atelier needs to keep its media there. */
  readonly env: Record<string, string>;
  /** Every key in the bucket under `prefix`, sorted. */
  keys(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * `corsOrigins`: pages that may PUT to the bucket from a browser (a CORS rule, as an operator
 * sets one on a real bucket for the console's direct uploads); none by default.
 */
export async function startS3(
  bucket = 'atelier-media',
  options: { corsOrigins?: readonly string[] } = {},
): Promise<TestS3> {
  const directory = mkdtempSync(path.join(tmpdir(), 'atelier-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [
      { name: bucket, configs: options.corsOrigins ? [corsRule(options.corsOrigins)] : [] },
    ],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    endpoint,
    bucket,
    env: {
      MEDIA_STORE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    keys: async (prefix) => {
      const listed = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }),
      );
      return (listed.Contents ?? []).map((object) => object.Key!).sort();
    },
    close: async () => {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A bucket CORS configuration letting `origins` PUT (and GET) with any request header. */
function corsRule(origins: readonly string[]): string {
  return `<CORSConfiguration><CORSRule>${origins
    .map((origin) => `<AllowedOrigin>${origin}</AllowedOrigin>`)
    .join('')}<AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod>
<AllowedHeader>*</AllowedHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule></CORSConfiguration>`;
}
