import { sql } from 'kysely';
import type { AccountRow } from './account.store.ts';
import type { Queryable } from './database.ts';
import type { TaskStatus } from './schema.ts';

/**
 * What operators read across accounts (issue 32 §1): accounts found by alias, ID or the email
 * of a linked identity; tasks with the failure detail the account never sees.
 */

export interface AccountSearch {
  /** Part of an alias, a whole account ID, or part of a linked identity's email. */
  text?: string | undefined;
  status?: AccountRow['status'] | undefined;
  /** Accounts whose alias sorts after this one (a page's cursor). */
  afterAlias?: string | undefined;
  limit: number;
}

/** Accounts by alias: the order an operator reads them in. */
export async function searchAccounts(q: Queryable, search: AccountSearch): Promise<AccountRow[]> {
  let select = q.selectFrom('accounts').selectAll().orderBy('alias').limit(search.limit);
  if (search.status !== undefined) select = select.where('status', '=', search.status);
  if (search.afterAlias !== undefined) select = select.where('alias', '>', search.afterAlias);
  const text = search.text?.trim();
  if (text !== undefined && text !== '') {
    const like = `%${escapeLike(text.toLowerCase())}%`;
    select = select.where((eb) =>
      eb.or([
        eb('id', '=', text),
        eb(sql`lower(alias)`, 'like', like),
        eb.exists(
          eb
            .selectFrom('identities')
            .select(sql`1`.as('one'))
            .whereRef('identities.account_id', '=', 'accounts.id')
            .where(sql`lower(identities.email)`, 'like', like),
        ),
        eb.exists(
          eb
            .selectFrom('idp_users')
            .select(sql`1`.as('one'))
            .whereRef('idp_users.account_id', '=', 'accounts.id')
            .where('idp_users.email', 'like', like),
        ),
      ]),
    );
  }
  return select.execute();
}

/** The emails an account signs in with (linked identities and built-in sign-ins). */
export async function accountEmails(q: Queryable, accountId: string): Promise<string[]> {
  const rows = await q
    .selectFrom('identities')
    .select('email')
    .where('account_id', '=', accountId)
    .where('email', 'is not', null)
    .union(q.selectFrom('idp_users').select('email').where('account_id', '=', accountId))
    .execute();
  return [...new Set(rows.flatMap((r) => (r.email === null ? [] : [r.email])))].sort();
}

export interface OperatorTaskFilter {
  accountId?: string | undefined;
  modelId?: string | undefined;
  /** A backend's ID (`<model>/<name>`). */
  backend?: string | undefined;
  finishCode?: number | undefined;
  /** Only tasks that finished with a code other than 0. */
  failed?: boolean | undefined;
  status?: TaskStatus | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface OperatorTaskRow {
  id: string;
  content_id: string;
  account_id: string;
  account_alias: string;
  model_id: string;
  kind: string;
  status: TaskStatus;
  finish_code: number | null;
  finish_message: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  attempts: number;
  credits_charged: number;
  credits_refunded: number;
  backend: string | null;
  failure_backend: string | null;
  failure_outcome: string | null;
  failure_status: number | null;
  failure_detail: string | null;
}

/** Tasks of every account, newest first, with their last failed run on a backend. */
export async function listOperatorTasks(
  q: Queryable,
  filter: OperatorTaskFilter,
  before: { createdAt: Date; id: string } | undefined,
  limit: number,
): Promise<OperatorTaskRow[]> {
  let select = q
    .selectFrom('tasks')
    .innerJoin('contents', 'contents.id', 'tasks.content_id')
    .innerJoin('accounts', 'accounts.id', 'tasks.account_id')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('task_attempts')
          .select([
            'task_attempts.backend_id as failure_backend',
            'task_attempts.outcome as failure_outcome',
            'task_attempts.provider_status as failure_status',
            'task_attempts.detail as failure_detail',
          ])
          .whereRef('task_attempts.task_id', '=', 'tasks.id')
          .where('task_attempts.outcome', '<>', 'ok')
          .orderBy('task_attempts.attempt', 'desc')
          .limit(1)
          .as('failure'),
      (join) => join.onTrue(),
    )
    .select([
      'tasks.id',
      'tasks.content_id',
      'tasks.account_id',
      'accounts.alias as account_alias',
      'tasks.model_id',
      'contents.kind',
      'tasks.status',
      'tasks.finish_code',
      'tasks.finish_message',
      'tasks.created_at',
      'tasks.started_at',
      'tasks.finished_at',
      'tasks.attempts',
      'contents.credits_charged',
      'contents.credits_refunded',
      'tasks.backend_id as backend',
      'failure.failure_backend',
      'failure.failure_outcome',
      'failure.failure_status',
      'failure.failure_detail',
    ])
    .orderBy('tasks.created_at', 'desc')
    .orderBy('tasks.id', 'desc')
    .limit(limit);
  if (filter.accountId !== undefined)
    select = select.where('tasks.account_id', '=', filter.accountId);
  if (filter.modelId !== undefined) select = select.where('tasks.model_id', '=', filter.modelId);
  if (filter.status !== undefined) select = select.where('tasks.status', '=', filter.status);
  if (filter.finishCode !== undefined)
    select = select.where('tasks.finish_code', '=', filter.finishCode);
  if (filter.failed === true) select = select.where('tasks.finish_code', '<>', 0);
  if (filter.since !== undefined) select = select.where('tasks.created_at', '>=', filter.since);
  if (filter.until !== undefined) select = select.where('tasks.created_at', '<', filter.until);
  if (filter.backend !== undefined) {
    const backend = filter.backend;
    // Any run on it: the task's last backend, or one it failed over from.
    select = select.where((eb) =>
      eb.or([
        eb('tasks.backend_id', '=', backend),
        eb.exists(
          eb
            .selectFrom('task_attempts as ta')
            .select(sql`1`.as('one'))
            .whereRef('ta.task_id', '=', 'tasks.id')
            .where('ta.backend_id', '=', backend),
        ),
      ]),
    );
  }
  if (before !== undefined) {
    select = select.where((eb) =>
      eb.or([
        eb('tasks.created_at', '<', before.createdAt),
        eb.and([eb('tasks.created_at', '=', before.createdAt), eb('tasks.id', '<', before.id)]),
      ]),
    );
  }
  return (await select.execute()) as OperatorTaskRow[];
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
