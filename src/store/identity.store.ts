import { sql } from 'kysely';
import { newId, randomBase62 } from '../shared/ids.ts';
import { insertAccount } from './account.store.ts';
import type { Db, Queryable } from './database.ts';

const seenResolutionMs = 5 * 60_000; // last_seen_at is kept to within 5 minutes

/** The account an identity maps to; refreshes `last_seen_at` only when it is stale. */
export async function findIdentityAccount(
  q: Queryable,
  issuer: string,
  subject: string,
): Promise<string | undefined> {
  const row = await q
    .selectFrom('identities')
    .select('account_id')
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  // The staleness test runs in SQL, on the database's clock that wrote the column.
  await q
    .updateTable('identities')
    .set({ last_seen_at: sql<Date>`now()` })
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .where((eb) =>
      eb.or([
        eb('last_seen_at', 'is', null),
        eb('last_seen_at', '<', sql<Date>`now() - ${seenResolutionMs} * interval '1 millisecond'`),
      ]),
    )
    .execute();
  return row.account_id;
}

export async function linkIdentity(
  q: Queryable,
  identity: { issuer: string; subject: string; accountId: string; email: string | null },
): Promise<void> {
  await q
    .insertInto('identities')
    .values({
      issuer: identity.issuer,
      subject: identity.subject,
      account_id: identity.accountId,
      email: identity.email,
      last_seen_at: sql<Date>`now()`,
    })
    .execute();
}

/**
 * Opens an account for a first sign-in and links the identity, in one transaction. Two first
 * sign-ins racing for the same identity end with one account: the loser's transaction fails on
 * the primary key and the caller reads the winner's link.
 */
export async function createAccountForIdentity(
  db: Db,
  identity: { issuer: string; subject: string; email: string | null },
): Promise<string> {
  const local =
    identity.email
      ?.split('@')[0]
      ?.replace(/[^A-Za-z0-9._-]/g, '')
      .slice(0, 40) || 'user';
  const accountId = newId('acc');
  await db.transaction().execute(async (trx) => {
    await insertAccount(trx, {
      id: accountId,
      alias: `${local}-${randomBase62(6)}`,
      role: 'user',
      apiKeyAccess: false,
    });
    await linkIdentity(trx, { ...identity, accountId });
  });
  return accountId;
}
