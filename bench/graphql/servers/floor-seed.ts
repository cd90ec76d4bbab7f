// The data every GraphQL floor server answers from: Atelier's schema (its migrations) and what
// bench/graphql/servers/atelier.ts seeds through Atelier's services — one account `bench`
// with API-key access, balances standard 1000 and video 10, one key — written with Atelier's
// store functions and key generation, so the floors look up the same hash in the same rows.
import { generateApiKey } from '../../../src/auth/api-key.ts';
import { newId } from '../../../src/shared/ids.ts';
import { insertAccount } from '../../../src/store/account.store.ts';
import { insertApiKey } from '../../../src/store/api-key.store.ts';
import { changeBalance } from '../../../src/store/credit.store.ts';
import type { Db } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrator.ts';

/** Migrates `db` and seeds it; returns the key's secret. */
export async function seedFloor(db: Db): Promise<string> {
  await migrateToLatest(db);
  const accountId = newId('acc');
  const key = generateApiKey();
  await db.transaction().execute(async (trx) => {
    await insertAccount(trx, { id: accountId, alias: 'bench', role: 'user', apiKeyAccess: true });
    for (const [category, amount] of Object.entries({ standard: 1000, video: 10 })) {
      await changeBalance(trx, {
        accountId,
        category,
        delta: amount,
        reason: 'grant',
        reference: 'account opening',
      });
    }
    await insertApiKey(trx, {
      id: newId('key'),
      accountId,
      name: 'bench',
      prefix: key.prefix,
      secretHash: key.secretHash,
      expiresAt: null,
    });
  });
  return key.secret;
}

/**
 * The floor's single query: the key by its hash, joined with its account and the account's
 * balances (one JSON array). Whether the key may be used is decided from this row alone.
 */
export const floorQuery = `
select a.id, a.alias, a.status, k.revoked_at, k.expires_at,
  coalesce((select json_agg(json_build_object('category', b.category, 'amount', b.amount)
                            order by b.category)
            from credit_balances b where b.account_id = a.id), '[]'::json) as balances
from api_keys k join accounts a on a.id = k.account_id
where k.secret_hash = $1`;

export interface FloorRow {
  id: string;
  alias: string;
  status: string;
  revoked_at: Date | null;
  expires_at: Date | null;
  balances: Array<{ category: string; amount: number }>;
}

/** The Mercurius schema of the floors: the fields of Atelier's `User` the bench asks for. */
export const floorSchema = `
type CreditBalance { category: String! amount: Int! }
type User { id: ID! alias: String creditBalances: [CreditBalance!]! }
type Query { getUserByPrivateId: User }`;

/** The account the row authorizes, or null (unknown, revoked, expired, suspended). */
export function usable(row: FloorRow | undefined, now: number) {
  if (row === undefined || row.revoked_at !== null || row.status !== 'active') return null;
  if (row.expires_at !== null && row.expires_at.getTime() <= now) return null;
  return { id: row.id, alias: row.alias, creditBalances: row.balances };
}
