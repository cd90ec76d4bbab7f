// Baseline: a bare graphql-ws server on ws with one subscription fed by an in-memory emitter,
// and a plain HTTP POST that publishes (`?tick=N`, N the value sent); prints {url, pid}.
import { EventEmitter, on } from 'node:events';
import { createServer } from 'node:http';
import { buildSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';

const bus = new EventEmitter();
bus.setMaxListeners(0);
const schema = buildSchema('type Query { hello: String } type Subscription { ticks: Int! }');
const roots = {
  subscription: {
    ticks: async function* () {
      for await (const [n] of on(bus, 'tick')) yield { ticks: n as number };
    },
  },
};
const server = createServer((req, res) => {
  bus.emit('tick', Number(new URL(req.url ?? '/', 'http://bench').searchParams.get('tick') ?? 1));
  res.end('ok');
});
const wss = new WebSocketServer({ server, path: '/graphql' });
useServer({ schema, roots }, wss);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}`, pid: process.pid }));
});
process.on('SIGTERM', () => server.close());
