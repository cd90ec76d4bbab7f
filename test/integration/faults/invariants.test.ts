import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { seedAccount } from '../../helpers/seed.ts';

// The checker the fault tests rely on: silent on a healthy history, loud on each kind of damage.
describeEachBackend('the five invariants checker', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ database, t } = started);
  });

  it('holds after successes, a failure and a cancellation, and names each kind of damage', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const ok = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'a', count: 2 });
    const failed = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fail', prompt: 'b' });
    const slow = await submitOk(t.url, apiKey, { modelId: 'mdl_test-slow', prompt: 'c' });
    await graphql(t.url, {
      query: 'mutation C($id: ID!) { cancelTask(taskId: $id) { taskId } }',
      variables: { id: slow.taskId },
      apiKey,
    });
    for (const { taskId } of [ok, failed, slow]) await waitForTask(t.url, apiKey, taskId);
    assert.deepEqual(await invariantViolations(database.db), []);

    const db = database.db;
    // A second debit for one submission (the balance no longer matches the ledger either), a
    // duplicated output, a task left running.
    const debit = await db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('reference', '=', ok.contentId)
      .where('reason', '=', 'debit')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('credit_ledger')
      .values({ ...debit, id: `${debit.id}x`, seq: undefined, created_at: undefined })
      .execute();
    await sql`INSERT INTO media (id, account_id, content_id, position, kind, mime_type, bytes,
        width, height, duration_ms, storage_key, filename, state)
      SELECT id || 'x', account_id, content_id, position, kind, mime_type, bytes, width, height,
        duration_ms, storage_key, filename, state
      FROM media WHERE content_id = ${ok.contentId} AND position = 0`.execute(db);
    await db
      .updateTable('tasks')
      .set({ status: 'running', finish_code: null, lease_token: 'stale', finished_at: null })
      .where('id', '=', failed.taskId)
      .execute();

    // A refund recorded on a success, with no ledger row behind it.
    await db
      .updateTable('contents')
      .set({ credits_refunded: 3 })
      .where('id', '=', ok.contentId)
      .execute();

    const found = await invariantViolations(db);
    const rules = new Set(found.map((line) => line.split(':')[0]));
    assert.deepEqual(
      [...rules].sort(),
      ['balance', 'debit', 'lost task', 'media', 'refund'],
      found.join('\n'),
    );
  });
});
