import { sql } from 'kysely';
import type { Queryable } from './database.ts';

/** The issuer recorded for this data store's built-in identity provider, if any yet. */
export async function recordedIdpIssuer(q: Queryable): Promise<string | undefined> {
  const row = await q.selectFrom('idp_issuer').select('issuer').executeTakeFirst();
  return row?.issuer;
}

/**
 * The built-in identity provider's issuer for this data store, recorded on first use: the
 * first writer wins and everyone reads the stored value, so processes starting together agree.
 * A data store from before the record keeps the issuer its users' identities already carry
 * (the one most of them use), so an upgrade changes no existing sign-in; a new one takes
 * `proposed`.
 */
export async function recordIdpIssuer(q: Queryable, proposed: string): Promise<string> {
  const recorded = await recordedIdpIssuer(q);
  if (recorded !== undefined) return recorded;
  const inUse = await q
    .selectFrom('identities')
    .innerJoin('idp_users', 'idp_users.id', 'identities.subject')
    .select('identities.issuer')
    .groupBy('identities.issuer')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy(sql`max(coalesce(identities.last_seen_at, identities.created_at))`, 'desc')
    .limit(1)
    .executeTakeFirst();
  await q
    .insertInto('idp_issuer')
    .values({ issuer: inUse?.issuer ?? proposed })
    .onConflict((oc) => oc.column('one_row').doNothing())
    .execute();
  const row = await q.selectFrom('idp_issuer').select('issuer').executeTakeFirstOrThrow();
  return row.issuer;
}
