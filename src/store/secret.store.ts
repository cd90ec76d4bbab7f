import { randomBytes } from 'node:crypto';
import type { Queryable } from './database.ts';

/**
 * A secret every node shares, made on first use: the first writer wins and everyone reads
 * the stored value, so concurrent starts agree.
 */
export async function sharedSecret(q: Queryable, name: string, bytes = 32): Promise<Buffer> {
  await q
    .insertInto('server_secrets')
    .values({ name, value: randomBytes(bytes).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await q
    .selectFrom('server_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}
