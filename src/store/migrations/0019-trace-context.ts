import { type Kysely, sql } from 'kysely';

/**
 * The W3C trace context of a task's submission (issue 32, traces): `{"traceparent": …,
 * "tracestate": …}` as the submitting process had it, or null when tracing was off there. The
 * worker that claims the task, in whatever process, parents its queue-wait and run spans on
 * it, so one generation is one trace. Written by the submission's one statement
 * (submission.store.ts), read with the claim (the claim function returns whole task rows).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE tasks ADD COLUMN trace_context jsonb`.execute(db);
}
