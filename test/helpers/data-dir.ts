import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { restrictToOwner } from '../../src/store/data-dir-modes.ts';
import { openDatabase } from '../../src/store/database.ts';
import { migrateToLatest } from '../../src/store/migrator.ts';

let template: Promise<string> | undefined;

/**
 * A new DATA_DIR (under the system temp directory, named from `prefix`) holding an empty,
 * migrated embedded database, for `bin/atelier` processes: a copy of one made once per test
 * process, so each server skips PGlite's initdb (seconds of CPU). The caller removes it.
 */
export async function migratedDataDir(prefix: string): Promise<string> {
  template ??= makeTemplate();
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cpSync(await template, dir, { recursive: true });
  // cpSync makes the directories under this process's umask; a data directory is owner-only.
  restrictToOwner(dir);
  return dir;
}

async function makeTemplate(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'atelier-template-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const database = await openDatabase({ backend: 'pglite', dataDir: dir });
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  return dir;
}
