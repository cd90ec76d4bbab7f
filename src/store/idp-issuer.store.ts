import { sql } from 'kysely';
import type { Queryable } from './database.ts';

/** The issuer recorded for this data store's built-in identity provider, if any yet. */
export async function recordedIdpIssuer(q: Queryable): Promise<string | undefined> {
  const row = await q.selectFrom('idp_issuer').select('issuer').executeTakeFirst();
  return row?.issuer;
}

/**
 * The built-in identity provider's issuer for this data store, recorded by the first server to
 * start: the first writer wins and everyone reads the stored value, so servers starting
 * together agree. A data store from before the record gets the server's own `proposed`
 * issuer, the one it signed and verified with until now.
 */
export async function recordIdpIssuer(q: Queryable, proposed: string): Promise<string> {
  await q
    .insertInto('idp_issuer')
    .values({ issuer: proposed })
    .onConflict((oc) => oc.column('one_row').doNothing())
    .execute();
  const row = await q.selectFrom('idp_issuer').select('issuer').executeTakeFirstOrThrow();
  return row.issuer;
}

/**
 * Links every built-in user under `issuer` to the account their sign-in belongs to, where no
 * link under it exists yet: users a command line added under another issuer (before the
 * record, or before any server started) then sign in to their own account, not to a new,
 * empty one. A link that exists is never moved. Returns how many were added.
 */
export async function linkIdpUsersUnder(q: Queryable, issuer: string): Promise<number> {
  const result = await q
    .insertInto('identities')
    .columns(['issuer', 'subject', 'account_id', 'email'])
    .expression(
      q
        .selectFrom('idp_users')
        .select([sql<string>`cast(${issuer} as text)`.as('issuer'), 'id', 'account_id', 'email']),
    )
    .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}
