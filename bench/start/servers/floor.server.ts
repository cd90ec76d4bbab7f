// Baseline: the least a server on the embedded database can do before it is ready — bare
// Fastify with PGlite on DATA_DIR (created there on the first start, as Atelier's is: initdb),
// one query, and `/readyz` answering 200 once both are up. No migrations, no engines, no keys.
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import Fastify from 'fastify';

const pglite = new PGlite(path.join(process.env.DATA_DIR!, 'pglite'));
await pglite.waitReady;
await pglite.query('select 1');
const app = Fastify();
app.get('/readyz', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.on('SIGTERM', async () => {
  await app.close();
  await pglite.close();
  process.exit(0);
});
