import type { Selectable } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Queryable } from './database.ts';
import { prepared } from './prepared.ts';
import type { AccountsTable } from './schema.ts';

export type AccountRow = Selectable<AccountsTable>;

export interface NewAccountRow {
  id: string;
  alias: string;
  role: AccountRow['role'];
  apiKeyAccess: boolean;
}

export async function insertAccount(q: Queryable, account: NewAccountRow): Promise<AccountRow> {
  return q
    .insertInto('accounts')
    .values({
      id: account.id,
      alias: account.alias,
      role: account.role,
      api_key_access: account.apiKeyAccess,
      status: 'active',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findAccount(q: Queryable, id: string): Promise<AccountRow | undefined> {
  return q.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findAccountByAlias(
  q: Queryable,
  alias: string,
): Promise<AccountRow | undefined> {
  return q.selectFrom('accounts').selectAll().where('alias', '=', alias).executeTakeFirst();
}

export async function countAccounts(q: Queryable): Promise<number> {
  const row = await q
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface AccountPatch {
  status?: AccountRow['status'];
  apiKeyAccess?: boolean;
}

export async function updateAccount(
  q: Queryable,
  id: string,
  patch: AccountPatch,
): Promise<AccountRow | undefined> {
  return q
    .updateTable('accounts')
    .set({
      ...(patch.status === undefined ? {} : { status: patch.status }),
      ...(patch.apiKeyAccess === undefined ? {} : { api_key_access: patch.apiKeyAccess }),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export interface AccountWithBalances extends AccountRow {
  balances: Array<{ category: string; amount: number }>;
}

/** Accounts, each with its balances by category as one JSON array column. */
function selectAccountsWithBalances(q: Queryable) {
  return q
    .selectFrom('accounts')
    .selectAll('accounts')
    .select((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('credit_balances')
          .select(['category', 'amount'])
          .whereRef('credit_balances.account_id', '=', 'accounts.id')
          .orderBy('category'),
      ).as('balances'),
    );
}

const accountWithBalances = prepared(
  (db, id: string) => selectAccountsWithBalances(db).where('accounts.id', '=', id),
  'placeholder:id',
);

/**
 * The account and its balances (by category) in one query: the hot read of
 * `getUserByPrivateId`, compiled once ({@link prepared}).
 */
export async function findAccountWithBalances(
  q: Queryable,
  id: string,
): Promise<AccountWithBalances | undefined> {
  return (await accountWithBalances(q, id))[0];
}

/**
 * Accounts with their balances, by alias (the order an operator reads them in), at most
 * `first`, after the alias `after` when given.
 */
export async function listAccountsWithBalances(
  q: Queryable,
  first: number,
  after: string | null,
): Promise<AccountWithBalances[]> {
  let query = selectAccountsWithBalances(q).orderBy('accounts.alias').limit(first);
  if (after !== null) query = query.where('accounts.alias', '>', after);
  return query.execute();
}

/** These accounts with their balances, in no particular order. */
export async function findAccountsWithBalances(
  q: Queryable,
  ids: readonly string[],
): Promise<AccountWithBalances[]> {
  if (ids.length === 0) return [];
  return selectAccountsWithBalances(q).where('accounts.id', 'in', ids).execute();
}
