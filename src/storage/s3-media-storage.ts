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
import { type Clock, systemClock } from '../shared/clock.ts';
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
 * How long the store may take. The SDK's own timeouts bound connecting and a silent socket
 * for each attempt (it retries a failed one twice); a deadline bounds a whole operation,
 * answer body included, against a store that answers slowly but never stops.
 */
export interface S3Timeouts {
  readonly connectMs: number;
  /** A socket silent for this long is given up. */
  readonly idleMs: number;
  /** A whole operation, retries included; a multipart upload gets this per part. */
  readonly requestMs: number;
}

const defaultTimeouts: S3Timeouts = {
  connectMs: 5_000, // 5 seconds
  idleMs: 30_000, // 30 seconds
  requestMs: 120_000, // 2 minutes
};

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
  readonly #timeouts: S3Timeouts;
  readonly #clock: Clock;

  constructor(config: S3Config, timeouts: S3Timeouts = defaultTimeouts, clock = systemClock) {
    this.#clock = clock;
    this.#bucket = config.bucket;
    this.#prefix = config.prefix;
    this.#timeouts = timeouts;
    const client: S3ClientConfig = {
      region: config.region,
      requestHandler: { connectionTimeout: timeouts.connectMs, socketTimeout: timeouts.idleMs },
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
    const parts = Math.max(1, Math.ceil(bytes.length / partBytes));
    const abortController = new AbortController();
    const deadline = setTimeout(
      () => abortController.abort(new Error('the object store took too long')),
      this.#timeouts.requestMs * parts,
    );
    try {
      await new Upload({
        client: this.#s3,
        params: { Bucket: this.#bucket, Key: this.#key(key), Body: bytes },
        partSize: partBytes,
        queueSize: 4,
        leavePartsOnError: false,
        abortController,
      }).done();
    } finally {
      clearTimeout(deadline);
    }
  }

  async get(key: string): Promise<Buffer> {
    const read = await this.getAtMost(key, Number.POSITIVE_INFINITY);
    if (read?.bytes == null) throw new Error(`No object ${key} in the bucket`);
    return read.bytes;
  }

  async getAtMost(key: string, maxBytes: number): Promise<BoundedRead | null> {
    const deadline = this.#deadline();
    let object: GetObjectCommandOutput;
    try {
      object = await this.#s3.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
        { abortSignal: deadline },
      );
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      throw error;
    }
    const body = object.Body as Readable | undefined;
    const size = object.ContentLength;
    if (body === undefined) return { size: size ?? 0, bytes: size ? null : Buffer.alloc(0) };
    if (size !== undefined && size > maxBytes) {
      body.destroy(); // the rest is never read
      return { size, bytes: null };
    }
    return readWithin(body, deadline, maxBytes);
  }

  async remove(key: string): Promise<void> {
    await this.#s3.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }), {
      abortSignal: this.#deadline(),
    });
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.#s3.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }), {
        abortSignal: this.#deadline(),
      });
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
    const seconds = secondsUntil(as.expiresAt, this.#clock);
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
      {
        expiresIn: secondsUntil(upload.expiresAt, this.#clock),
        signableHeaders: new Set(['content-length']),
      },
    );
  }

  close(): void {
    this.#s3.destroy();
    this.#putSigner.destroy();
  }

  #deadline(): AbortSignal {
    return AbortSignal.timeout(this.#timeouts.requestMs);
  }

  #key(key: string): string {
    if (!safeKey.test(key) || key.includes('..')) throw new Error(`Unsafe storage key: ${key}`);
    return `${this.#prefix}${key}`;
  }
}

/** Presigned URLs count their lifetime from now, in whole seconds. */
function secondsUntil(expiresAt: Date, clock: Clock): number {
  return Math.max(1, Math.ceil((expiresAt.getTime() - clock.now().getTime()) / 1000));
}

/**
 * The whole body if it holds at most `maxBytes` (a stated length is not trusted: the bytes are
 * counted as they come), else its size so far; an error once `deadline` passes.
 */
async function readWithin(
  body: Readable,
  deadline: AbortSignal,
  maxBytes: number,
): Promise<BoundedRead> {
  const stop = () => body.destroy(new Error('the object store took too long to answer'));
  if (deadline.aborted) stop();
  deadline.addEventListener('abort', stop, { once: true });
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        body.destroy();
        return { size, bytes: null };
      }
      chunks.push(chunk as Buffer);
    }
    return { size, bytes: Buffer.concat(chunks, size) };
  } finally {
    deadline.removeEventListener('abort', stop);
  }
}
