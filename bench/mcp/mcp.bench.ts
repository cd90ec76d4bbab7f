// MCP throughput: `tools/call get_account` on Atelier's `/mcp` (MCP access token checked on
// every request, the account's balances read) against its floor — an MCP SDK server bound the
// same way (stateless Streamable HTTP, a new server and transport per request) whose tool does
// the same work: the same RS256 token verified with jose, then one query for the live token,
// its account and balances (servers/sdk-floor.server.ts) — on each database, and against the
// same SDK server answering a constant without authentication (sdk-echo), under the same load
// generator (autocannon) in the same run. Prints requests per second and the ratios; the
// floor is the baseline `npm run bench` reports.
//
//   node bench/mcp/mcp.bench.ts [--duration 10] [--connections 10] [--rounds 1]
//
// Each server runs in its own process; the load generator runs in this one. Floor and Atelier
// alternate, `--rounds` times each (medians are shown); the floor runs on the database Atelier
// built just before it, with its token and keys. Atelier keeps its embedded PGlite in a
// temporary DATA_DIR; with PostgreSQL reachable (BENCH_DATABASE_URL, or TEST_DATABASE_URL),
// both are measured on it as well, each on a scratch database.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import autocannon from 'autocannon';
import { report } from '../report.ts';
import { benchPostgres, withScratchDatabase } from '../scratch-database.ts';
import { type ServerProcess, startServer, stopServer } from '../server-process.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);

/** What a server's ready line says. */
interface Ready {
  url: string;
  token?: string;
  /** Atelier's public keys (atelier.server.ts), for the floor. */
  jwks?: unknown;
}

type Started = ServerProcess<Ready>;

const start = (script: string, env: Record<string, string> = {}) =>
  startServer<Ready>(new URL(script, import.meta.url), env);

const call = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_account', arguments: {} },
});

function headersFor(server: Started): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
  };
  if (server.token !== undefined) headers.authorization = `Bearer ${server.token}`;
  return headers;
}

/** One call before the load: a 200 carrying a structured tool result, not an error. */
async function verify(name: string, server: Started): Promise<void> {
  const res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: headersFor(server),
    body: call,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${name}: tools/call answered ${res.status}: ${text}`);
  // SSE (the transport's default, which Atelier keeps) or a plain JSON body.
  const data = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice('data: '.length);
  const message = JSON.parse(data ?? 'null') as {
    result?: { isError?: boolean; structuredContent?: unknown };
  } | null;
  if (message?.result?.structuredContent === undefined || message.result.isError === true)
    throw new Error(`${name}: tools/call get_account gave no result: ${text}`);
}

interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Verifies, warms up and loads one server, and stops it whatever happens. */
async function measure(name: string, server: Started): Promise<Measured> {
  try {
    return await load(name, server);
  } finally {
    await stopServer(server);
  }
}

async function load(name: string, server: Started): Promise<Measured> {
  await verify(name, server);
  const options = {
    url: `${server.url}/mcp`,
    method: 'POST' as const,
    headers: headersFor(server),
    body: call,
    connections,
  };
  // Warm-up (JIT compilation, caches, pool): 2 s, or half a short run.
  await autocannon({ ...options, duration: Math.min(2, duration / 2) });
  const result = await autocannon({ ...options, duration });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors, // socket errors and timeouts
  };
}

const results: Measured[] = [];
const echoName = 'mcp sdk get_account (constant)';
const floorName = (backend: string) => `mcp sdk get_account, same work [${backend}]`;
const atelierName = (backend: string) => `atelier get_account [${backend}]`;

/**
 * Atelier, then the floor on the database Atelier built (the same rows, its token and keys),
 * on one backend, `rounds` times, each round on a fresh database.
 */
async function pair(backend: string, env: Record<string, string>): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'atelier-bench-mcp-'));
    const both = async (database: Record<string, string>) => {
      const atelier = await start('./servers/atelier.server.ts', { ...env, ...database });
      results.push(await measure(atelierName(backend), atelier));
      const floor = await start('./servers/sdk-floor.server.ts', {
        ...env,
        ...database,
        BENCH_MCP_TOKEN: atelier.token!,
        BENCH_MCP_JWKS: JSON.stringify(atelier.jwks),
      });
      results.push(await measure(floorName(backend), { ...floor, token: atelier.token! }));
    };
    try {
      if (env.DATABASE_URL) {
        await withScratchDatabase(benchPostgres!, (url) =>
          both({ DATABASE_URL: url, DATA_DIR: dataDir }),
        );
      } else {
        await both({ DATABASE_URL: '', DATA_DIR: dataDir });
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
}

for (let round = 0; round < rounds; round++)
  results.push(await measure(echoName, await start('./servers/sdk-echo.server.ts')));
await pair('pglite', {});
if (benchPostgres) await pair('postgres', { DATABASE_URL: benchPostgres });

/** The median run of each target (by req/s). */
const medians = [...new Set(results.map((r) => r.name))].map((name) => {
  const runs = results.filter((r) => r.name === name).sort((a, b) => a.rps - b.rps);
  return runs[Math.floor((runs.length - 1) / 2)]!;
});
const rpsOf = (name: string) => medians.find((r) => r.name === name)?.rps;
const echo = rpsOf(echoName)!;
const floorOf = (r: Measured) => {
  const backend = /\[(\w+)\]$/.exec(r.name)?.[1];
  return backend === undefined ? undefined : rpsOf(floorName(backend));
};

console.log(
  `\n${duration} s per target, ${connections} connections, median of ${rounds}, node ${process.version}\n`,
);
console.log(
  'target                                       req/s   p50 ms  p99 ms  non-2xx  errors  ×echo  ×floor',
);
for (const r of medians) {
  const floor = floorOf(r);
  console.log(
    [
      r.name.padEnd(42),
      r.rps.toFixed(0).padStart(7),
      r.p50.toFixed(1).padStart(8),
      r.p99.toFixed(1).padStart(7),
      String(r.non2xx).padStart(8),
      String(r.errors).padStart(7),
      (r.rps / echo).toFixed(2).padStart(6),
      (floor === undefined ? '' : (r.rps / floor).toFixed(2)).padStart(7),
    ].join(' '),
  );
}
if (results.some((r) => r.non2xx > 0 || r.errors > 0)) process.exitCode = 1;
report(
  medians
    .filter((r) => r.name.startsWith('atelier'))
    .map((r) => ({
      bench: 'mcp',
      measure: r.name,
      atelier: r.rps,
      baseline: floorOf(r)!,
      baselineName: r.name.replace(
        /^atelier get_account/,
        'SDK server, same token check and one query',
      ),
      unit: 'req/s',
      higherIsBetter: true,
    })),
);
