import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { newId } from '../../../src/shared/ids.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import { insertSubmission } from '../../../src/store/submission.store.ts';
import { claimTask, runningOf } from '../../../src/store/task-queue.store.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';

async function queueTasks(database: Database, count: number): Promise<string> {
  const accountId = newId('acc');
  await insertAccount(database.db, {
    id: accountId,
    alias: accountId,
    role: 'user',
    apiKeyAccess: false,
  });
  for (let i = 0; i < count; i++) {
    const contentId = newId('cnt');
    await insertSubmission(database.db, {
      debits: [],
      content: {
        id: contentId,
        accountId,
        kind: 'image',
        modelId: 'mdl_test',
        input: { prompt: `task ${i}` },
        inputHash: contentId,
        idempotencyKey: null,
        creditsCharged: 1,
      },
      task: { id: newId('tsk'), maxAttempts: 3 },
    });
  }
  return accountId;
}

describeEachBackend('claiming queued tasks', (backend) => {
  let database: Database;
  // A second process claiming from the same database (its own pool); PGlite has one connection.
  let other: Database;
  before(async () => {
    database = await createTestDatabase(backend);
    other =
      database.connectionUrl === null
        ? database
        : await openDatabase({ backend: 'postgres', url: database.connectionUrl, poolSize: 5 });
  });
  after(async () => {
    if (other !== database) await other.close();
    await database.close();
  });

  it('two claimers racing never run more than the cap for an account, nor a task twice', async () => {
    const busy = await queueTasks(database, 8);
    const quiet = await queueTasks(database, 2);
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        claimTask(i % 2 === 0 ? database.db : other.db, `claimer-${i % 2}`, 60_000, 2),
      ),
    );
    const claimed = claims.filter((c) => c !== undefined);
    assert.equal(new Set(claimed.map((c) => c.task.id)).size, claimed.length, 'no task twice');
    assert.equal(await runningOf(database.db, busy), 2);
    assert.equal(await runningOf(database.db, quiet), 2);
    assert.equal(claimed.length, 4);
    for (const { task, content } of claimed) {
      assert.equal(task.status, 'running');
      assert.equal(content.id, task.content_id, 'each claim carries its own content');
      assert.ok(content.created_at instanceof Date);
    }
    // Nothing more while the cap is full, for either claimer.
    assert.equal(await claimTask(other.db, 'claimer-1', 60_000, 2), undefined);
    assert.equal(await claimTask(database.db, 'claimer-0', 60_000, 2), undefined);
  });
});
