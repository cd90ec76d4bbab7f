import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The mode bits of group and others: none of them belong on anything under DATA_DIR. */
const groupAndOthers = 0o077;

/**
 * Umask of a process that writes DATA_DIR: what it creates is its owner's only (directories
 * 0700, files 0600). The embedded database writes its files (its write-ahead log holds the
 * signing keys) with whatever mode the umask leaves, as do the media files and the lock.
 */
export const ownerOnlyUmask = groupAndOthers;

/**
 * Takes group and other permissions off `root` and everything under it (0755 → 0700,
 * 0644 → 0600), walking without recursion and never through a symbolic link. Returns how many
 * entries it changed: 0 for a directory already owner-only, or one that does not exist yet.
 * POSIX only: on Windows modes do not protect files, and nothing is changed.
 */
export function restrictToOwner(root: string): number {
  if (process.platform === 'win32') return 0;
  let changed = 0;
  const pending = [root];
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(entry);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // gone meanwhile
      throw error;
    }
    if (stat.isSymbolicLink()) continue;
    if ((stat.mode & groupAndOthers) !== 0) {
      chmodSync(entry, stat.mode & 0o700);
      changed += 1;
    }
    if (stat.isDirectory()) {
      for (const name of readdirSync(entry)) pending.push(path.join(entry, name));
    }
  }
  return changed;
}
