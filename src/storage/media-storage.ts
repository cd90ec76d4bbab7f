import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where media bytes live. The local directory is the default; an object store can follow. */
export interface MediaStorage {
  put(key: string, bytes: Buffer): Promise<void>;
  get(key: string): Promise<Buffer>;
  remove(key: string): Promise<void>;
  /** The file of a key, for serving it with Range support; null when not on local disk. */
  localPath(key: string): string | null;
}

const safeKey = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

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

  async remove(key: string): Promise<void> {
    await rm(this.#resolve(key), { force: true });
  }

  localPath(key: string): string {
    return this.#resolve(key);
  }

  #resolve(key: string): string {
    // Keys are made by the service, never by clients; refuse anything that could escape root.
    if (!safeKey.test(key) || key.includes('..')) throw new Error(`Unsafe storage key: ${key}`);
    return path.join(this.#root, key);
  }
}
