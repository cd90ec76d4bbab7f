import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { LocalTaskEvents } from '../../../src/events/task-events.ts';
import { RunOutcomes } from '../../../src/jobs/run-outcomes.ts';
import { OutageLog } from '../../../src/observability/outage-log.ts';
import { TaskFinisher } from '../../../src/services/task-finisher.ts';
import { newId } from '../../../src/shared/ids.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { LocalMediaStorage } from '../../../src/storage/media-storage.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import type { NewMediaRow } from '../../../src/store/media.store.ts';
import { insertSubmission } from '../../../src/store/submission.store.ts';
import {
  claimTask,
  findTask,
  finishOkThenClaim,
  runningOf,
  type TaskRow,
} from '../../../src/store/task-queue.store.ts';
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

describeEachBackend('a success finished with the next claim, in one statement', (backend) => {
  let database: Database;
  let storageRoot: string;
  const claim = { owner: 'worker-0', leaseMs: 60_000, maxRunningPerAccount: 1 };
  before(async () => {
    database = await createTestDatabase(backend);
    storageRoot = mkdtempSync(path.join(tmpdir(), 'atelier-finish-claim-'));
  });
  after(async () => {
    await database.close();
    rmSync(storageRoot, { recursive: true, force: true });
  });

  /** A media row for the finish of `task`, as a worker's stored output makes it. */
  function mediaOf(task: TaskRow): NewMediaRow {
    return {
      id: newId('med'),
      accountId: task.account_id,
      contentId: task.content_id,
      position: 0,
      kind: 'image',
      mimeType: 'image/png',
      bytes: 68,
      width: 1,
      height: 1,
      durationMs: null,
      storageKey: `${task.content_id}/0.png`,
      filename: 'image.png',
    };
  }

  async function mediaRows(contentId: string) {
    return database.db
      .selectFrom('media')
      .select('id')
      .where('content_id', '=', contentId)
      .execute();
  }

  it('finishes the task, records its media and run, then claims the place it freed', async () => {
    const accountId = await queueTasks(database, 2);
    const first = await claimTask(database.db, 'worker-0', 60_000, 1);
    assert.ok(first);
    assert.equal(await claimTask(database.db, 'worker-1', 60_000, 1), undefined, 'one place each');

    const { finished, claimed } = await finishOkThenClaim(
      database.db,
      first.task.id,
      first.task.lease_token,
      {
        media: [mediaOf(first.task)],
        attempt: {
          taskId: first.task.id,
          attempt: 1,
          backendId: 'bke_test',
          startedAt: first.task.claimed_at!,
          outcome: 'ok',
          detail: null,
          providerStatus: null,
        },
      },
      claim,
    );
    assert.equal(finished?.id, first.task.id);
    assert.equal(finished?.status, 'finished');
    assert.equal(finished?.finish_code, FinishCode.Ok);
    assert.ok(finished?.finished_at instanceof Date);
    assert.equal((await mediaRows(first.content.id)).length, 1);
    // The run's record starts at its claim to the microsecond (a JavaScript date has only
    // milliseconds): a run claimed in the same statement must not seem to overlap it.
    const { rows: runs } = await sql<{ backend_id: string; outcome: string; exact: boolean }>`
      SELECT a.backend_id, a.outcome, a.started_at = t.claimed_at AS exact
      FROM task_attempts a JOIN tasks t ON t.id = a.task_id
      WHERE a.task_id = ${first.task.id}`.execute(database.db);
    assert.deepEqual(runs, [{ backend_id: 'bke_test', outcome: 'ok', exact: true }]);
    // The account's one place was the finished task's: the claim in the same statement saw it
    // free and took the account's second task.
    assert.ok(claimed);
    assert.notEqual(claimed.task.id, first.task.id);
    assert.equal(claimed.task.account_id, accountId);
    assert.equal(claimed.task.status, 'running');
    assert.equal(claimed.content.id, claimed.task.content_id);
    assert.ok(claimed.content.created_at instanceof Date);
    assert.equal(await runningOf(database.db, accountId), 1);

    // The queue is empty now: the next finish finishes and claims nothing.
    const last = await finishOkThenClaim(
      database.db,
      claimed.task.id,
      claimed.task.lease_token,
      { media: [mediaOf(claimed.task)] },
      claim,
    );
    assert.equal(last.finished?.id, claimed.task.id);
    assert.equal(last.claimed, undefined);
    assert.equal(await runningOf(database.db, accountId), 0);
  });

  it('a finish whose lease is not the caller’s writes nothing, and its claim sees the task running', async () => {
    const accountId = await queueTasks(database, 2);
    const first = await claimTask(database.db, 'worker-0', 60_000, 1);
    assert.ok(first);
    const { finished, claimed } = await finishOkThenClaim(
      database.db,
      first.task.id,
      'not-the-lease',
      { media: [mediaOf(first.task)] },
      claim,
    );
    assert.equal(finished, undefined);
    assert.equal(claimed, undefined, 'the account’s one place is still taken');
    assert.equal(await runningOf(database.db, accountId), 1);
    assert.deepEqual(await mediaRows(first.content.id), []);
  });

  it('a finish whose answer was lost after it committed keeps its files', async () => {
    await queueTasks(database, 1);
    const first = await claimTask(database.db, 'worker-0', 60_000, 0);
    assert.ok(first);
    // The connection breaks after the finish committed, before its answer came back: the try
    // after it is refused (the task is finished), and must not take the result's files.
    class AnswerLost extends TaskFinisher {
      lost = false;
      override async finish(...args: Parameters<TaskFinisher['finish']>) {
        const finished = await super.finish(...args);
        if (this.lost) return finished;
        this.lost = true;
        throw new Error('Connection terminated unexpectedly');
      }
    }
    const storage = new LocalMediaStorage(storageRoot);
    const outcomes = new RunOutcomes({
      db: database.db,
      storage,
      finisher: new AnswerLost({ db: database.db, events: new LocalTaskEvents() }),
      outages: new OutageLog(silentLogger),
      log: silentLogger,
      announce: async () => {},
      pause: async () => {},
      stopping: () => false,
    });
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const output = { kind: 'image', mimeType: 'image/png', extension: 'png', bytes: png } as const;
    await outcomes.settle(first.task, first.content, { ok: true, outputs: [output] }, undefined);
    const rows = await database.db
      .selectFrom('media')
      .select('storage_key')
      .where('content_id', '=', first.content.id)
      .execute();
    assert.equal(rows.length, 1, 'the first try’s media row');
    assert.deepEqual(await storage.get(rows[0]!.storage_key), png, 'and its file, still there');
  });

  it('a claim that fails takes the finish down with it, and the finish is then written alone', async () => {
    const accountId = await queueTasks(database, 2);
    const first = await claimTask(database.db, 'worker-0', 60_000, 1);
    assert.ok(first);
    const errors: string[] = [];
    const outcomes = new RunOutcomes({
      db: database.db,
      storage: new LocalMediaStorage(storageRoot),
      finisher: new TaskFinisher({ db: database.db, events: new LocalTaskEvents() }),
      outages: new OutageLog(silentLogger),
      log: { ...silentLogger, error: (_details, message) => errors.push(message) },
      announce: async () => {},
      pause: async () => {},
      stopping: () => false,
    });
    // PostgreSQL refuses a text value with a NUL byte in it: the statement fails as a whole.
    const broken = { ...claim, owner: 'worker\u0000' };
    const next = await outcomes.settle(
      first.task,
      first.content,
      { ok: true, outputs: [] },
      undefined,
      () => broken,
    );
    assert.equal(next, undefined, 'no claim was made');
    assert.deepEqual(errors, ['a finish with the next claim failed; finishing alone']);
    const task = await findTask(database.db, accountId, first.task.id);
    assert.equal(task?.status, 'finished');
    assert.equal(task?.finish_code, FinishCode.Ok);
    assert.equal(await runningOf(database.db, accountId), 0, 'and nothing was claimed');
  });
});
