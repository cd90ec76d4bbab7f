import { randomBytes } from 'node:crypto';
import type { Queryable } from './database.ts';

/** A random secret every node shares (the media URL signing key), made on first use. */
export async function sharedSecret(q: Queryable, name: string, bytes = 32): Promise<Buffer> {
  const value = await sharedValue(q, name, async () => randomBytes(bytes).toString('base64url'));
  return Buffer.from(value, 'base64url');
}

/**
 * A stored value every node shares, made by `make` on first use: the first writer wins and
 * everyone reads the stored value, so concurrent starts agree.
 */
export async function sharedValue(
  q: Queryable,
  name: string,
  make: () => Promise<string>,
): Promise<string> {
  const existing = await q
    .selectFrom('server_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirst();
  if (existing !== undefined) return existing.value;
  await q
    .insertInto('server_secrets')
    .values({ name, value: await make() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await q
    .selectFrom('server_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.value;
}
