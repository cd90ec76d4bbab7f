// GraphQL throughput: Atelier's authenticated getUserByPrivateId against bare `{ hello }`
// servers (Mercurius, GraphQL Yoga) started by this script, under the same load generator
// (autocannon) in the same run. Prints requests per second and the ratios.
//
//   node bench/graphql/graphql.bench.ts [--duration 10] [--connections 20]
//
// Each server runs in its own process; the load generator runs in this one. With PostgreSQL
// reachable (BENCH_DATABASE_URL, or TEST_DATABASE_URL), Atelier is measured on it as well.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { report } from '../report.ts';
import { benchPostgres, withScratchDatabase } from '../scratch-database.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);

interface Started {
  child: ChildProcess;
  url: string;
  apiKey?: string;
}

async function start(script: string, env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, [new URL(script, import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, ...(JSON.parse(line) as { url: string; apiKey?: string }) };
}

async function stop(server: Started): Promise<void> {
  const exited = once(server.child, 'exit');
  server.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
  server.child.kill('SIGKILL');
}

interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function measure(name: string, server: Started, query: string): Promise<Measured> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (server.apiKey !== undefined) headers.authorization = `Bearer ${server.apiKey}`;
  const options = {
    url: `${server.url}/graphql`,
    method: 'POST' as const,
    headers,
    body: JSON.stringify({ query }),
    connections,
  };
  await autocannon({ ...options, duration: 2 }); // warm-up: JIT compilation, caches, pool
  const result = await autocannon({ ...options, duration });
  const errors = result.errors + result.non2xx;
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors,
  };
}

const me = '{ getUserByPrivateId { id alias creditBalances { category amount } } }';
const hello = '{ hello }';
const results: Measured[] = [];

const mercurius = await start('./servers/mercurius-hello.ts');
results.push(await measure('mercurius { hello }', mercurius, hello));
await stop(mercurius);

const yoga = await start('./servers/yoga-hello.ts');
results.push(await measure('yoga { hello }', yoga, hello));
await stop(yoga);

const atelier = await start('./servers/atelier.ts', { DATABASE_URL: '' });
results.push(await measure('atelier getUserByPrivateId [pglite]', atelier, me));
await stop(atelier);

if (benchPostgres) {
  await withScratchDatabase(benchPostgres, async (url) => {
    const onPostgres = await start('./servers/atelier.ts', { DATABASE_URL: url });
    results.push(await measure('atelier getUserByPrivateId [postgres]', onPostgres, me));
    await stop(onPostgres);
  });
}

const base = (name: string) => results.find((r) => r.name === name)!.rps;
console.log(`\n${duration} s per target, ${connections} connections, node ${process.version}\n`);
console.log(
  'target                                   req/s   p50 ms  p99 ms  errors  ×mercurius  ×yoga',
);
for (const r of results) {
  console.log(
    [
      r.name.padEnd(38),
      r.rps.toFixed(0).padStart(7),
      r.p50.toFixed(1).padStart(8),
      r.p99.toFixed(1).padStart(7),
      String(r.errors).padStart(7),
      (r.rps / base('mercurius { hello }')).toFixed(2).padStart(11),
      (r.rps / base('yoga { hello }')).toFixed(2).padStart(6),
    ].join(' '),
  );
}
if (results.some((r) => r.errors > 0)) process.exitCode = 1;
report(
  results
    .filter((r) => r.name.startsWith('atelier'))
    .map((r) => ({
      bench: 'graphql',
      measure: r.name,
      atelier: r.rps,
      baseline: base('mercurius { hello }'),
      baselineName: 'mercurius { hello }',
      unit: 'req/s',
      higherIsBetter: true,
    })),
);
