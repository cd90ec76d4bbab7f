import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { report } from '../report.ts';
import { benchPostgres, withScratchDatabase } from '../scratch-database.ts';
import { type ServerProcess, startServer, stopServer } from '../server-process.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    // `--no-yoga` leaves the second `{ hello }` server out (a quick run).
    yoga: { type: 'boolean', default: true },
  },
  allowNegative: true,
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Math.max(1, Number(values.rounds));

type Started = ServerProcess<{ url: string; apiKey?: string }>;

const start = (script: string, env: Record<string, string> = {}) =>
  startServer<{ url: string; apiKey?: string }>(new URL(script, import.meta.url), env);
const stop = (server: Started) => stopServer(server);

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
  // Warm-up (JIT compilation, caches, pool): 2 s, or half a short run.
  await autocannon({ ...options, duration: Math.min(2, duration / 2) });
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

if (values.yoga) {
  const yoga = await start('./servers/yoga-hello.ts');
  results.push(await measure('yoga { hello }', yoga, hello));
  await stop(yoga);
}

/**
 * Floor and Atelier on one kind of database, in turn, `rounds` times; medians of each. Every
 * server gets a database of its own (`using` gives its DATABASE_URL), seeded by the server.
 */
async function pair(
  label: string,
  using: (run: (env: Record<string, string>) => Promise<void>) => Promise<void>,
): Promise<void> {
  const runs: Record<'floor' | 'atelier', Measured[]> = { floor: [], atelier: [] };
  for (let round = 0; round < rounds; round += 1) {
    for (const [which, script] of [
      ['floor', './servers/floor.ts'],
      ['atelier', './servers/atelier.ts'],
    ] as const) {
      await using(async (env) => {
        const server = await start(script, env);
        runs[which].push(await measure(which, server, me));
        await stop(server);
      });
    }
  }
  results.push(median(`floor getUserByPrivateId [${label}]`, runs.floor));
  results.push(median(`atelier getUserByPrivateId [${label}]`, runs.atelier));
}

function median(name: string, runs: Measured[]): Measured {
  const mid = (pick: (m: Measured) => number) => {
    const sorted = runs.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  return {
    name,
    rps: mid((m) => m.rps),
    p50: mid((m) => m.p50),
    p99: mid((m) => m.p99),
    errors: runs.reduce((sum, m) => sum + m.errors, 0),
  };
}

const databases = ['pglite'];
await pair('pglite', (run) => run({ DATABASE_URL: '' }));
if (benchPostgres) {
  databases.push('postgres');
  const server = benchPostgres;
  await pair('postgres', (run) => withScratchDatabase(server, (url) => run({ DATABASE_URL: url })));
}

const base = (name: string) => results.find((r) => r.name === name)!.rps;
console.log(`\n${duration} s per target, ${connections} connections, node ${process.version}\n`);
console.log(
  'target                                     req/s   p50 ms  p99 ms  errors  ×mercurius  ×yoga',
);
for (const r of results) {
  console.log(
    [
      r.name.padEnd(40),
      r.rps.toFixed(0).padStart(7),
      r.p50.toFixed(1).padStart(8),
      r.p99.toFixed(1).padStart(7),
      String(r.errors).padStart(7),
      (r.rps / base('mercurius { hello }')).toFixed(2).padStart(11),
      (values.yoga ? (r.rps / base('yoga { hello }')).toFixed(2) : '—').padStart(6),
    ].join(' '),
  );
}
for (const database of databases) {
  const ratio =
    base(`atelier getUserByPrivateId [${database}]`) /
    base(`floor getUserByPrivateId [${database}]`);
  console.log(`atelier / floor [${database}]: ${ratio.toFixed(2)}×`);
}
if (results.some((r) => r.errors > 0)) process.exitCode = 1;
report(
  databases.map((database) => ({
    bench: 'graphql',
    measure: `getUserByPrivateId [${database}]`,
    atelier: base(`atelier getUserByPrivateId [${database}]`),
    baseline: base(`floor getUserByPrivateId [${database}]`),
    baselineName: `floor: Fastify + Mercurius, one ${database === 'pglite' ? 'PGlite' : 'pg'} query`,
    unit: 'req/s',
    higherIsBetter: true,
  })),
);
