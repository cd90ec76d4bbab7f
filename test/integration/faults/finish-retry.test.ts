import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 30 §7: when a run's outputs were in hand but its finish could not be written (the
// database cut), the run was counted as an engine failure ("engine failed unexpectedly", an
// attempt used), its files were left on disk, and the task ran again after its lease — a
// provider generating twice. Now the finish is tried again, fenced by the lease, with the
// same files, and the engine runs once. Played with a database whose every statement fails, as
// a cut connection's does, from the moment the engine's run ends.

describeEachBackend('a finish the database cannot take at first', (backend) => {
  let database: Database;
  let t: TestApp;
  let cutOff = false;
  const failWhileCutOff: KyselyPlugin = {
    transformQuery: (args) => {
      if (cutOff) throw new Error('Connection terminated unexpectedly');
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(
      {
        db: database.db.withPlugin(failWhileCutOff),
        backend: database.backend,
        connectionUrl: database.connectionUrl,
        ping: () => database.ping(),
        close: () => database.close(),
      },
      { env: { MODELS: testModels, WORKER_CONCURRENCY: '1', TASK_LEASE_MS: '30000' } },
    );
  });
  after(async () => {
    cutOff = false;
    await t?.close();
    await database?.close();
  });

  it('is tried again with the same files: the engine runs once, no attempt is used, no orphan', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    const { taskId, contentId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_test-quick',
      prompt: 'outputs in hand, database away',
    });
    // The run's end is logged just before its files are stored and its finish is written.
    await t.logged((e) => e.msg === 'engine run ended' && e.taskId === taskId);
    cutOff = true;
    await t.logged(
      (e) => e.msg === 'task outcome not recorded yet; trying again' && e.taskId === taskId,
    );
    cutOff = false;

    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const logs = t.logs();
    const started = logs
      .split('\n')
      .filter((l) => l.includes('"task started"') && l.includes(taskId));
    assert.equal(started.length, 1, 'the engine ran once');
    assert.doesNotMatch(logs, /engine failed unexpectedly/);
    const row = await database.db
      .selectFrom('tasks')
      .select('attempts')
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    assert.equal(row.attempts, 1, 'no attempt used up');
    assert.deepEqual(await balances(t.url, apiKey), { standard: 97 });

    // Every file on disk is one a media row names.
    const media = await database.db
      .selectFrom('media')
      .select('storage_key')
      .where('content_id', '=', contentId)
      .execute();
    assert.equal(media.length, 1);
    const dir = path.join(t.app.config.dataDir, 'files', 'media', account.id);
    assert.deepEqual(
      readdirSync(dir).sort(),
      media.map((m) => path.basename(m.storage_key)).sort(),
    );
  });
});
