import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * PGlite is one process's database: two processes opening the same directory corrupt it.
 * A lock file holding the owner's pid makes a second opener fail with a clear message.
 */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  readonly pid: number;

  constructor(dataDir: string, pid: number) {
    super(
      `The data directory ${dataDir} is in use by a running Atelier process (pid ${pid}). ` +
        'Stop that server first, or run against PostgreSQL with DATABASE_URL.',
    );
    this.pid = pid;
  }
}

export interface DataDirLock {
  release(): void;
}

/** Takes the lock of `dataDir` for this process, or throws {@link DataDirInUseError}. */
export function lockDataDir(dataDir: string): DataDirLock {
  // Owner-only, as everything under it (the umask does the rest; see data-dir-modes.ts).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, 'atelier.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return { release: () => rmSync(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new DataDirInUseError(dataDir, owner);
      }
      // A lock left by a process that died without cleaning up: take it over.
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
