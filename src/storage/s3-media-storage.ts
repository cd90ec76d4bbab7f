import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NotFound,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config/deployment.ts';
import { type MediaStorage, type ServeAs, safeKey } from './media-storage.ts';

/** Objects above this size are uploaded in parts of this size (S3's minimum part is 5 MiB). */
const partBytes = 8 * 1024 * 1024;

/**
 * Media in an S3-compatible bucket, under an optional prefix. Large objects (video) go up in
 * parts, several at once; downloads are presigned GETs that expire with the download URL that
 * led to them, and name the file and its type. The bucket itself stays private.
 */
export class S3MediaStorage implements MediaStorage {
  readonly #s3: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(config: S3Config) {
    this.#bucket = config.bucket;
    this.#prefix = config.prefix;
    this.#s3 = new S3Client({
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
    });
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
    const seconds = Math.max(1, Math.ceil((as.expiresAt.getTime() - Date.now()) / 1000));
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

  close(): void {
    this.#s3.destroy();
  }

  #key(key: string): string {
    if (!safeKey.test(key) || key.includes('..')) throw new Error(`Unsafe storage key: ${key}`);
    return `${this.#prefix}${key}`;
  }
}
