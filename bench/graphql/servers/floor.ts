// Floor: bare Fastify + Mercurius (JIT, cache) answering the bench's getUserByPrivateId with
// one database query per request — the API key from `Authorization: Bearer`, hashed as Atelier
// hashes it, looked up joined with its account and balances. DATABASE_URL selects `pg`
// (a pool of 10, as Atelier's); otherwise an in-memory PGlite started as Atelier starts it.
// Seeds what servers/atelier.ts seeds; prints {url, apiKey}.
import { PGlite } from '@electric-sql/pglite';
import Fastify from 'fastify';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import mercurius from 'mercurius';
import pg from 'pg';
import { hashApiKey, isWellFormedApiKey } from '../../../src/auth/api-key.ts';
import { pgliteStartParams } from '../../../src/store/database.ts';
import type { Tables } from '../../../src/store/schema.ts';
import { type FloorRow, floorQuery, floorSchema, seedFloor, usable } from './floor-seed.ts';

let query: (hash: string) => Promise<FloorRow | undefined>;
let db: Kysely<Tables>;
const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  query = async (hash) => (await pool.query<FloorRow>(floorQuery, [hash])).rows[0];
} else {
  const pglite = new PGlite({ startParams: [...pgliteStartParams] });
  await pglite.waitReady;
  db = new Kysely<Tables>({ dialect: new PGliteDialect({ pglite }) });
  query = async (hash) => (await pglite.query<FloorRow>(floorQuery, [hash])).rows[0];
}
const apiKey = await seedFloor(db);

const bearer = /^Bearer (\S+)$/;
const app = Fastify();
await app.register(mercurius, {
  schema: floorSchema,
  jit: 1,
  cache: true,
  resolvers: {
    Query: {
      getUserByPrivateId: async (_root, _args, ctx) => {
        const secret = bearer.exec(ctx.reply.request.headers.authorization ?? '')?.[1];
        if (secret === undefined || !isWellFormedApiKey(secret)) throw new Error('unauthorized');
        const user = usable(await query(hashApiKey(secret)), Date.now());
        if (user === null) throw new Error('unauthorized');
        return user;
      },
    },
  },
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url, apiKey }));
process.on('SIGTERM', () => {
  app.close().then(
    () => db.destroy(),
    () => process.exit(1),
  );
});
