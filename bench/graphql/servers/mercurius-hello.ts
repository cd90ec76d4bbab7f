// Baseline: bare Fastify + Mercurius (JIT, cache) answering `{ hello }`; prints {url}.
import Fastify from 'fastify';
import mercurius from 'mercurius';

const app = Fastify();
await app.register(mercurius, {
  schema: 'type Query { hello: String }',
  resolvers: { Query: { hello: async () => 'world' } },
  jit: 1,
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url }));
process.on('SIGTERM', () => {
  app.close().catch(() => process.exit(1));
});
