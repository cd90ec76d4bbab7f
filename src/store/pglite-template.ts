import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { atelierCacheDir } from '../config/cache-dir.ts';
import { systemClock } from '../shared/clock.ts';
import { restrictToOwner } from './data-dir-modes.ts';

/**
 * A data-directory template for the embedded database: what PGlite's initdb writes (about
 * 40 MB, 1,000 files) with Atelier's migrations applied, made once and kept, so that a new
 * DATA_DIR gets a native copy of it (about 0.1 s) instead of running initdb and the migrations
 * in the server (about 2 s of CPU, and memory that the server's process keeps afterwards:
 * WebAssembly memory never shrinks). A template is made by PGlite itself, in a process of its
 * own (`scripts/pglite-template.ts`, run by `npm install` and, when a template is missing, by
 * the first start that needs one), and is named by the installed PGlite's version and the
 * migrations' content: a template of another version or another schema is never used. No
 * migration writes rows, so copies share nothing but the schema. Anything wrong with it —
 * absent, another version, a file missing or of another size — and the database is created by
 * initdb (and migrated by the server) as before.
 */

const manifestName = 'atelier-template.json';

interface Manifest {
  readonly pglite: string;
  /** The migrations applied (`schemaVersion`). */
  readonly schema: string;
  /** Every file of the template but the manifest: path relative to it → size in bytes. */
  readonly files: Record<string, number>;
}

/** The installed PGlite's version (its package.json, beside its `dist/`). */
export const pgliteVersion: string = (
  JSON.parse(
    readFileSync(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')), 'utf8'),
  ) as { version: string }
).version;

/**
 * The migrations' names and content, hashed: a template holds exactly this schema. A changed
 * or added migration file names a new template.
 */
export const schemaVersion: string = (() => {
  const dir = new URL('./migrations/', import.meta.url);
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    hash
      .update(`${name}\0`)
      .update(readFileSync(new URL(name, dir)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 12);
})();

/** Where templates are kept: Atelier's cache directory (`$XDG_CACHE_HOME/atelier`). */
export function defaultTemplateRoot(): string {
  return atelierCacheDir();
}

/** The template for the installed PGlite and this code's migrations under `root`. */
export function templateDir(root: string): string {
  return path.join(root, `pglite-${pgliteVersion}-${schemaVersion}`);
}

/** The template's manifest when it is one made by the installed PGlite, of this schema, else null. */
function readManifest(dir: string): Manifest | null {
  try {
    const manifest = JSON.parse(readFileSync(path.join(dir, manifestName), 'utf8')) as Manifest;
    return manifest.pglite === pgliteVersion &&
      manifest.schema === schemaVersion &&
      typeof manifest.files === 'object'
      ? manifest
      : null;
  } catch {
    return null;
  }
}

function listFiles(dir: string): Record<string, number> {
  const files: Record<string, number> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, file)] = statSync(file).size;
  }
  return files;
}

/**
 * Makes the template under `root` in this process (PGlite's initdb into a directory of its
 * own, and the migrations, then renamed into place, so a reader sees a whole template or none). Two makers at once
 * each make their own; the first rename wins and the other's copy is removed.
 */
export async function makeTemplate(root: string): Promise<void> {
  const [{ PGlite }, { Kysely, PGliteDialect }, { migrateToLatest }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('kysely'),
    import('./migrator.ts'),
  ]);
  const dir = templateDir(root);
  if (readManifest(dir) !== null) return;
  mkdirSync(root, { recursive: true });
  // A maker takes seconds: a copy older than ten minutes is one a killed maker left.
  const prefix = `${path.basename(dir)}.tmp-`;
  for (const name of readdirSync(root)) {
    const leftover = path.join(root, name);
    if (
      name.startsWith(prefix) &&
      systemClock.now().getTime() - statSync(leftover).mtimeMs > 600_000
    ) {
      rmSync(leftover, { recursive: true, force: true });
    }
  }
  const building = `${dir}.tmp-${process.pid}-${randomUUID()}`;
  try {
    const db = new Kysely({ dialect: new PGliteDialect({ pglite: new PGlite(building) }) });
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy(); // closes PGlite
    }
    const manifest: Manifest = {
      pglite: pgliteVersion,
      schema: schemaVersion,
      files: listFiles(building),
    };
    writeFileSync(path.join(building, manifestName), JSON.stringify(manifest));
    if (existsSync(dir) && readManifest(dir) === null)
      rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(building, dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another maker's template is already there.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

const maker = fileURLToPath(new URL('../../scripts/pglite-template.ts', import.meta.url));

/**
 * Makes the template under `root` in a short-lived child process, so initdb's memory is never
 * this process's. Resolves whether a valid template is there afterwards.
 */
async function makeTemplateAside(root: string): Promise<boolean> {
  const child = spawn(process.execPath, [maker, root], { stdio: 'ignore' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code === 0 && readManifest(templateDir(root)) !== null;
}

/**
 * Fills `pgdata`, which must not exist, with a copy of the template under `root` (made first,
 * in a child process, when missing): copied beside `pgdata`, checked against the template's
 * manifest, then renamed into place. Returns false, leaving nothing behind, when there is no
 * usable template; the caller then lets PGlite run initdb. The caller holds the lock of the
 * directory that holds `pgdata`.
 */
export async function seedFromTemplate(pgdata: string, root: string): Promise<boolean> {
  // The caller holds the data directory's lock: a copy found beside `pgdata` is one that a
  // start killed while copying left behind.
  const prefix = `${path.basename(pgdata)}.tmp-`;
  for (const name of readdirSync(path.dirname(pgdata))) {
    if (name.startsWith(prefix)) rmSync(path.join(path.dirname(pgdata), name), { recursive: true });
  }
  const dir = templateDir(root);
  let manifest = readManifest(dir);
  if (manifest === null) {
    if (!(await makeTemplateAside(root).catch(() => false))) return false;
    manifest = readManifest(dir);
    if (manifest === null) return false;
  }
  const copying = `${pgdata}.tmp-${process.pid}-${randomUUID()}`;
  try {
    const skip = path.join(dir, manifestName);
    // cpSync copies natively: about 0.1 s here, where the promise-based cp takes 0.5 s.
    cpSync(dir, copying, { recursive: true, filter: (source) => source !== skip });
    // A copy keeps the template's modes whatever the umask: the database's files are the
    // owner's only (their write-ahead log will hold the signing keys).
    restrictToOwner(copying);
    const copied = listFiles(copying);
    const expected = Object.entries(manifest.files);
    if (
      Object.keys(copied).length !== expected.length ||
      expected.some(([file, size]) => copied[file] !== size)
    ) {
      return false;
    }
    renameSync(copying, pgdata);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(copying, { recursive: true, force: true });
  }
}
