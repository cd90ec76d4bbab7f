import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  defaultTemplateRoot,
  makeTemplate,
  seedFromTemplate,
} from '../../src/store/pglite-template.ts';

/**
 * A new DATA_DIR (under the system temp directory, named from `prefix`) holding an empty,
 * migrated embedded database, for `bin/atelier` processes: a copy of the data-directory
 * template that `npm install` made (made here if it is missing), so each server skips PGlite's
 * initdb and the migrations (seconds of CPU each). The caller removes it.
 */
export async function migratedDataDir(prefix: string): Promise<string> {
  const root = defaultTemplateRoot();
  await makeTemplate(root);
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  if (!(await seedFromTemplate(path.join(dir, 'pglite'), root))) {
    throw new Error(`No usable data-directory template under ${root}`);
  }
  return dir;
}
