import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/store/database.ts';

// The embedded database starts with a small buffer cache (issue 19: idle RSS): initdb writes
// 128MB into postgresql.conf, and the start parameters must win over it, on a new data
// directory and when an existing one is opened again.
it('PGlite runs with shared_buffers 8MB, on a new data directory and on reopening it', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'atelier-pglite-'));
  const setting = async () => {
    const database = await openDatabase({ backend: 'pglite', dataDir: dir });
    try {
      const { rows } = await sql<{
        shared_buffers: string;
      }>`show shared_buffers`.execute(database.db);
      return rows[0]!.shared_buffers;
    } finally {
      await database.close();
    }
  };
  try {
    assert.equal(await setting(), '8MB', 'new');
    assert.equal(await setting(), '8MB', 'reopened');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
