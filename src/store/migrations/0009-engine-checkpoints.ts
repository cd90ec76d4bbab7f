import { type Kysely, sql } from 'kysely';

/**
 * A remote engine's note on its task (the id of the job it started at the provider), kept
 * across attempts so a task retried after a lost lease resumes that job instead of paying the
 * provider for a second one. Null until an engine writes it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE tasks ADD COLUMN engine_checkpoint text`.execute(db);
}
