import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config/deployment.ts';
import {
  type BoundedRead,
  type DirectUpload,
  type MediaStorage,
  type ServeAs,
  safeKey,
} from './media-storage.ts';

/** Objects above this size are uploaded in parts of this size (S3's minimum part is 5 MiB). */
const partBytes = 8 * 1024 * 1024;

/**
 * Media in an S3-compatible bucket, under an optional prefix. Large objects (video) go up in
 * parts, several at once; downloads are presigned GETs that expire with the download URL that
 * led to them, and name the file and its type; uploads may be presigned PUTs of an exact
 * length. The bucket itself stays private.
 */
export class S3MediaStorage implements MediaStorage {
  readonly #s3: S3Client;
  /**
   * Signs PUT URLs without the SDK's default checksum: at signing time there is no body, so
   * the SDK would sign the CRC32 of an empty one and S3 would refuse every real upload.
   */
  readonly #putSigner: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(config: S3Config) {
    this.#bucket = config.bucket;
    this.#prefix = config.prefix;
    const client: S3ClientConfig = {
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.accessKeyId && config.secretAccessKey
        ? {
            credentials: {
              accessKeyId: config.accessKeyId,
              secretAccessKey: config.secretAccessKey,
            },
          }
        : {}),
    };
    this.#s3 = new S3Client(client);
    this.#putSigner = new S3Client({ ...client, requestChecksumCalculation: 'WHEN_REQUIRED' });
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    // One PUT below a part's size, a multipart upload above it.
    const upload = new Upload({
      client: this.#s3,
      params: { Bucket: this.#bucket, Key: this.#key(key), Body: bytes },
      partSize: partBytes,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async get(key: string): Promise<Buffer> {
    const object = await this.#s3.send(
      new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
    );
    return Buffer.from(await object.Body!.transformToByteArray());
  }

  async getAtMost(key: string, maxBytes: number): Promise<BoundedRead | null> {
    let object: GetObjectCommandOutput;
    try {
      object = await this.#s3.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
      );
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      throw error;
    }
    const body = object.Body as
      | (Readable & { transformToByteArray(): Promise<Uint8Array> })
      | undefined;
    const size = object.ContentLength ?? 0;
    if (body === undefined) return { size, bytes: size === 0 ? Buffer.alloc(0) : null };
    if (size > maxBytes) {
      body.destroy(); // the rest is never read
      return { size, bytes: null };
    }
    const bytes = Buffer.from(await body.transformToByteArray());
    return { size: bytes.length, bytes: bytes.length > maxBytes ? null : bytes };
  }

  async remove(key: string): Promise<void> {
    await this.#s3.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.#s3.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
      return true;
    } catch (error) {
      if (error instanceof NotFound) return false;
      throw error;
    }
  }

  localPath(): null {
    return null;
  }

  presignedGet(key: string, as: ServeAs): Promise<string> {
    const seconds = secondsUntil(as.expiresAt);
    return getSignedUrl(
      this.#s3,
      new GetObjectCommand({
        Bucket: this.#bucket,
        Key: this.#key(key),
        ResponseContentType: as.mimeType,
        ResponseContentDisposition: `attachment; filename="${as.filename}"`,
      }),
      { expiresIn: seconds },
    );
  }

  /** A PUT of exactly `upload.bytes` bytes (Content-Length is signed), until `expiresAt`. */
  presignedPut(key: string, upload: DirectUpload): Promise<string> {
    return getSignedUrl(
      this.#putSigner,
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: this.#key(key),
        ContentLength: upload.bytes,
      }),
      { expiresIn: secondsUntil(upload.expiresAt), signableHeaders: new Set(['content-length']) },
    );
  }

  close(): void {
    this.#s3.destroy();
    this.#putSigner.destroy();
  }

  #key(key: string): string {
    if (!safeKey.test(key) || key.includes('..')) throw new Error(`Unsafe storage key: ${key}`);
    return `${this.#prefix}${key}`;
  }
}

/** Presigned URLs count their lifetime from now, in whole seconds. */
function secondsUntil(expiresAt: Date): number {
  return Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
}
