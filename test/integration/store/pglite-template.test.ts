import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/store/database.ts';
import { pendingMigrations } from '../../../src/store/migrator.ts';
import {
  makeTemplate,
  pgliteVersion,
  schemaVersion,
  seedFromTemplate,
  templateDir,
} from '../../../src/store/pglite-template.ts';

// A new embedded database is a copy of a data-directory template made once per PGlite version
// and schema (issue 19: first start), and is still made by initdb when the template is
// unusable. Every initdb gives a new system identifier; copies of one template share the
// template's.

const scratch = mkdtempSync(path.join(tmpdir(), 'atelier-template-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => path.join(scratch, `d${dirs++}`);

async function systemIdentifier(dataDir: string, templateRoot: string | null): Promise<string> {
  const database = await openDatabase({ backend: 'pglite', dataDir, templateRoot });
  try {
    const { rows } = await sql<{
      id: string;
    }>`select system_identifier::text as id from pg_control_system()`.execute(database.db);
    return rows[0]!.id;
  } finally {
    await database.close();
  }
}

const manifestOf = (root: string) =>
  JSON.parse(readFileSync(path.join(templateDir(root), 'atelier-template.json'), 'utf8')) as {
    pglite: string;
    schema: string;
    files: Record<string, number>;
  };

async function pendingIn(dataDir: string, templateRoot: string | null): Promise<string[]> {
  const database = await openDatabase({ backend: 'pglite', dataDir, templateRoot });
  try {
    return await pendingMigrations(database.db);
  } finally {
    await database.close();
  }
}

describe('the data-directory template', () => {
  const root = newDir();
  /**
   * A new root holding a copy of the template under `root` (made there first when missing): a
   * template as `makeTemplate` leaves it, for a test to damage or age, without the seconds of
   * initdb and migrations a new one takes. Its databases share the system identifier of
   * `root`'s.
   */
  const copyOfTemplate = async (): Promise<string> => {
    await makeTemplate(root);
    const copy = newDir();
    cpSync(templateDir(root), templateDir(copy), { recursive: true });
    return copy;
  };

  it('is made on first need, named by the PGlite version and schema, and copied for new databases', async () => {
    const first = await systemIdentifier(newDir(), root);
    assert.equal(manifestOf(root).pglite, pgliteVersion);
    assert.equal(manifestOf(root).schema, schemaVersion);
    assert.equal(path.basename(templateDir(root)), `pglite-${pgliteVersion}-${schemaVersion}`);
    const second = await systemIdentifier(newDir(), root);
    assert.equal(second, first, 'both copies of one template');
    assert.notEqual(await systemIdentifier(newDir(), null), first, 'initdb without a template');
  });

  it('holds every migration: a database made from it has none pending; one made by initdb has all', async () => {
    assert.deepEqual(await pendingIn(newDir(), root), []);
    const all = await pendingIn(newDir(), null);
    assert.ok(all.length > 10, `initdb alone leaves every migration pending: ${all.join(', ')}`);
  });

  it('keeps data across a restart of a database made from it', async () => {
    const dataDir = newDir();
    const first = await openDatabase({ backend: 'pglite', dataDir, templateRoot: root });
    await sql`create table kept (v text)`.execute(first.db);
    await sql`insert into kept values ('still here')`.execute(first.db);
    await first.close();
    const again = await openDatabase({ backend: 'pglite', dataDir, templateRoot: root });
    try {
      const { rows } = await sql<{ v: string }>`select v from kept`.execute(again.db);
      assert.deepEqual(rows, [{ v: 'still here' }]);
    } finally {
      await again.close();
    }
  });

  it('is not used when a file is missing or of another size, and leaves nothing behind', async () => {
    const damaged = await copyOfTemplate();
    const files = Object.keys(manifestOf(damaged).files);
    truncateSync(path.join(templateDir(damaged), files.find((f) => f.endsWith('pg_control'))!));
    const dataDir = newDir();
    mkdirSync(dataDir);
    const target = path.join(dataDir, 'pglite');
    assert.equal(await seedFromTemplate(target, damaged), false);
    assert.equal(existsSync(target), false);
    assert.deepEqual(readdirSync(path.dirname(target), { withFileTypes: false }), []);
  });

  for (const [what, stale] of [
    ['another PGlite version', { pglite: '0.0.1' }],
    ['another schema', { schema: 'other' }],
  ] as const) {
    it(`of ${what} is replaced by one of this version and schema`, async () => {
      const other = await copyOfTemplate();
      const manifest = manifestOf(other);
      writeFileSync(
        path.join(templateDir(other), 'atelier-template.json'),
        JSON.stringify({ ...manifest, ...stale }),
      );
      const old = await systemIdentifier(newDir(), root); // what a copy of `other` held
      const made = await systemIdentifier(newDir(), other);
      assert.equal(manifestOf(other).pglite, pgliteVersion);
      assert.equal(manifestOf(other).schema, schemaVersion);
      assert.notEqual(made, old);
      assert.equal(await systemIdentifier(newDir(), other), made, 'the new template is used');
    });
  }

  it('damaged in a way its manifest does not show: the copy is dropped and initdb runs', async () => {
    const damaged = await copyOfTemplate();
    const good = await systemIdentifier(newDir(), damaged);
    const control = path.join(templateDir(damaged), 'global', 'pg_control');
    writeFileSync(control, Buffer.alloc(statSync(control).size, 0xff));
    const fresh = await systemIdentifier(newDir(), damaged);
    assert.match(fresh, /^\d+$/);
    assert.notEqual(fresh, good, 'made by initdb, not copied');
  });

  it('removes a copy that a killed start left half made', async () => {
    const dataDir = newDir();
    const leftover = path.join(dataDir, 'pglite.tmp-99999-left');
    mkdirSync(path.join(leftover, 'base'), { recursive: true });
    await systemIdentifier(dataDir, root);
    assert.deepEqual(readdirSync(dataDir), ['pglite']);
  });

  it('falls back to initdb when no template can be made', async () => {
    // A template root under a regular file cannot be created.
    const file = newDir();
    writeFileSync(file, 'not a directory');
    const dataDir = newDir();
    assert.match(await systemIdentifier(dataDir, path.join(file, 'atelier')), /^\d+$/);
    assert.deepEqual(readdirSync(dataDir).sort(), ['pglite'], 'no copy left beside it');
  });

  it('made by two processes at once is whole, and used by both', async () => {
    const shared = newDir();
    const maker = new URL('../../../scripts/pglite-template.ts', import.meta.url).pathname;
    const children = [0, 1].map(() =>
      spawn(process.execPath, [maker, shared], { stdio: 'inherit' }),
    );
    const codes = await Promise.all(children.map(async (c) => (await once(c, 'exit'))[0]));
    assert.deepEqual(codes, [0, 0]);
    assert.deepEqual(
      readdirSync(shared),
      [path.basename(templateDir(shared))],
      'no half-made copy left',
    );
    const a = await systemIdentifier(newDir(), shared);
    const b = await systemIdentifier(newDir(), shared);
    assert.equal(a, b);
  });
});
