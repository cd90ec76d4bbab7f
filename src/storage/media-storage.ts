import { randomBytes } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** How a stored file is handed to a client that holds a valid download URL. */
export interface ServeAs {
  readonly expiresAt: Date;
  readonly filename: string;
  readonly mimeType: string;
}

/** What a client may upload straight to the store through a presigned PUT. */
export interface DirectUpload {
  readonly expiresAt: Date;
  /** The exact length of the body; the store refuses any other where it can. */
  readonly bytes: number;
}

/** An object read only if it is small enough: its size, and its bytes unless it is larger. */
export interface BoundedRead {
  readonly size: number;
  readonly bytes: Buffer | null;
}

/** Where media bytes live: a local directory (the default) or an S3-compatible bucket. */
export interface MediaStorage {
  put(key: string, bytes: Buffer): Promise<void>;
  get(key: string): Promise<Buffer>;
  /**
   * The object's bytes when it holds at most `maxBytes`, only its size when it holds more (a
   * client's object is not trusted to be what it was declared), null when there is none.
   */
  getAtMost(key: string, maxBytes: number): Promise<BoundedRead | null>;
  remove(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** The file of a key, for serving it with Range support; null when not on local disk. */
  localPath(key: string): string | null;
  /** A URL that serves the object directly until `expiresAt`; null when the API serves it. */
  presignedGet(key: string, as: ServeAs): Promise<string | null>;
  /** A URL a client PUTs the bytes of `key` to until `expiresAt`; null when the API takes them. */
  presignedPut(key: string, upload: DirectUpload): Promise<string | null>;
}

export const safeKey = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Media under `<dataDir>/media`, written atomically (temporary file, then rename). */
export class LocalMediaStorage implements MediaStorage {
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.#resolve(key);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, bytes, { mode: 0o600 });
    await rename(temporary, file);
  }

  async get(key: string): Promise<Buffer> {
    return readFile(this.#resolve(key));
  }

  async getAtMost(key: string, maxBytes: number): Promise<BoundedRead | null> {
    const file = this.#resolve(key);
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      return null;
    }
    if (size > maxBytes) return { size, bytes: null };
    const bytes = await readFile(file);
    return { size: bytes.length, bytes: bytes.length > maxBytes ? null : bytes };
  }

  async remove(key: string): Promise<void> {
    await rm(this.#resolve(key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    try {
      await access(this.#resolve(key));
      return true;
    } catch {
      return false;
    }
  }

  localPath(key: string): string {
    return this.#resolve(key);
  }

  async presignedGet(): Promise<null> {
    return null;
  }

  /** Uploads to a local directory go through the API, which checks them on arrival. */
  async presignedPut(_key: string, _upload: DirectUpload): Promise<string | null> {
    return null;
  }

  #resolve(key: string): string {
    // Keys are made by the service, never by clients; refuse anything that could escape root.
    if (!safeKey.test(key) || key.includes('..')) throw new Error(`Unsafe storage key: ${key}`);
    return path.join(this.#root, key);
  }
}
