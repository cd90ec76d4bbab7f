import type { Selectable } from 'kysely';
import type { Queryable } from './database.ts';
import { prepared } from './prepared.ts';
import type { AccountsTable, ApiKeysTable } from './schema.ts';

export type ApiKeyRow = Selectable<ApiKeysTable>;
/** What may leave the store for listings: everything but the hash. */
export type ApiKeyMetadataRow = Omit<ApiKeyRow, 'secret_hash'>;

const metadataColumns = [
  'id',
  'account_id',
  'name',
  'prefix',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
] as const;

export interface NewApiKeyRow {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  secretHash: string;
  expiresAt: Date | null;
}

export async function insertApiKey(q: Queryable, key: NewApiKeyRow): Promise<ApiKeyMetadataRow> {
  return q
    .insertInto('api_keys')
    .values({
      id: key.id,
      account_id: key.accountId,
      name: key.name,
      prefix: key.prefix,
      secret_hash: key.secretHash,
      expires_at: key.expiresAt,
    })
    .returning(metadataColumns)
    .executeTakeFirstOrThrow();
}

/** A key with the state of its account, read together so authentication is one query. */
export interface ApiKeyWithAccount extends ApiKeyRow {
  account_status: AccountsTable['status'];
  account_role: AccountsTable['role'];
}

const apiKeyByHash = prepared(
  (db, secretHash: string) =>
    db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .selectAll('api_keys')
      .select(['accounts.status as account_status', 'accounts.role as account_role'])
      .where('api_keys.secret_hash', '=', secretHash),
  'placeholder:hash',
);

/** Compiled once ({@link prepared}): every request with a key not in the verifier's cache. */
export async function findApiKeyByHash(
  q: Queryable,
  secretHash: string,
): Promise<ApiKeyWithAccount | undefined> {
  return (await apiKeyByHash(q, secretHash))[0];
}

export async function listApiKeys(q: Queryable, accountId: string): Promise<ApiKeyMetadataRow[]> {
  return q
    .selectFrom('api_keys')
    .select(metadataColumns)
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Revokes the key if it belongs to `accountId`; a second revocation keeps the first time. */
export async function revokeApiKey(
  q: Queryable,
  accountId: string,
  id: string,
  at: Date,
): Promise<ApiKeyMetadataRow | undefined> {
  return q
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(at)) }))
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returning(metadataColumns)
    .executeTakeFirst();
}

export async function touchApiKey(q: Queryable, id: string, at: Date): Promise<void> {
  await q.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
