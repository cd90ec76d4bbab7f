import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { LocalTaskEvents } from '../../../src/events/task-events.ts';
import { TaskEventFeed } from '../../../src/services/task-event-feed.ts';
import type { Database } from '../../../src/store/database.ts';
import { type LoggedTaskEvent, logHead, readLog } from '../../../src/store/task-event.store.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';

// The event log's promise of no gap (issue 21): an event committed behind a transaction that is
// still running is held back until that transaction ends, and the earlier transaction's event
// then comes first. Two connections are needed to show it, so PostgreSQL only.

describe('the task event log under concurrent transactions [postgres]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase('postgres');
    await sql`INSERT INTO accounts (id, alias, role, api_key_access)
      VALUES ('acc_log', 'log', 'user', false)`.execute(database.db);
    for (const n of [1, 2]) {
      await sql`INSERT INTO contents (id, account_id, kind, model_id, input, input_hash, credits_charged)
        VALUES (${`cnt_${n}`}, 'acc_log', 'image', 'mdl_x', '{}', ${`h${n}`}, 0)`.execute(
        database.db,
      );
      await sql`INSERT INTO tasks (id, content_id, account_id, model_id, max_attempts)
        VALUES (${`tsk_${n}`}, ${`cnt_${n}`}, 'acc_log', 'mdl_x', 3)`.execute(database.db);
    }
  });
  after(() => database?.close());

  it('holds back an event committed behind a running transaction, then delivers both in order', async () => {
    const events = new LocalTaskEvents();
    const feed = new TaskEventFeed({ db: database.db, events, pollMs: 20, retryMs: 5 });
    const received: LoggedTaskEvent[] = [];
    let arrived: () => void = () => {};
    const both = new Promise<void>((resolve) => {
      arrived = () => received.length >= 2 && resolve();
    });
    const { stop } = await feed.listen((event) => {
      received.push(event);
      arrived();
    });
    try {
      const head = await logHead(database.db);
      let releaseEarlier!: () => void;
      const hold = new Promise<void>((resolve) => {
        releaseEarlier = resolve;
      });
      let started!: () => void;
      const xidTaken = new Promise<void>((resolve) => {
        started = resolve;
      });
      // The earlier transaction takes its ID first and writes its event last.
      const earlier = database.db.transaction().execute(async (trx) => {
        await sql`SELECT pg_current_xact_id()`.execute(trx);
        started();
        await hold;
        await sql`UPDATE tasks SET progress = 0.25 WHERE id = 'tsk_1'`.execute(trx);
      });
      await xidTaken;
      await sql`UPDATE tasks SET progress = 0.5 WHERE id = 'tsk_2'`.execute(database.db);

      const meanwhile = await readLog(database.db, head, 10);
      assert.deepEqual(
        meanwhile.map((e) => [e.event.task.id, e.deliverable]),
        [['tsk_2', false]],
      );

      releaseEarlier();
      await earlier;
      const settled = await readLog(database.db, head, 10);
      assert.deepEqual(
        settled.map((e) => [e.event.task.id, e.deliverable]),
        [
          ['tsk_1', true],
          ['tsk_2', true],
        ],
      );
      await both;
      assert.deepEqual(
        received.map((e) => [e.task.id, e.task.progress]),
        [
          ['tsk_1', 0.25],
          ['tsk_2', 0.5],
        ],
      );
    } finally {
      stop();
      await feed.close();
    }
  });
});
