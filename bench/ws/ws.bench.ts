// Live updates at scale: idle subscriptions held by one process (its RSS) and the time until
// every subscriber of one account has seen one task update — Atelier (myTaskUpdates, fed by
// a real submission's `queued` through the event log and the task-event bus) against a bare
// graphql-ws server with an in-memory emitter, same client, same run. Prints both and the
// ratios. The fan-out is the median of several updates, one after another: a single one moved
// by a fifth from run to run.
//
//   node bench/ws/ws.bench.ts [--connections 2000] [--per-connection 5] [--updates 5]
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import type { Client } from 'graphql-ws';
import { report } from '../report.ts';
import {
  connectGraphqlWs,
  type ServerProcess,
  startServer,
  stopServer,
} from '../server-process.ts';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '2000' },
    'per-connection': { type: 'string', default: '5' },
    updates: { type: 'string', default: '5' },
  },
});
const connections = Number(values.connections);
const perConnection = Number(values['per-connection']);
const total = connections * perConnection;
const updates = Number(values.updates);
if (!Number.isInteger(updates) || updates < 1) {
  console.error('--updates must be a whole number, at least 1.');
  process.exit(2);
}

type Started = ServerProcess<{ url: string; pid: number; apiKey?: string }>;

const start = (script: string) =>
  startServer<{ url: string; pid: number; apiKey?: string }>(new URL(script, import.meta.url));

function rssMiB(pid: number): number {
  return (
    Number(
      execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
        .toString()
        .trim(),
    ) / 1024
  );
}

const connect = connectGraphqlWs;

interface Result {
  name: string;
  idleMiB: number;
  heldMiB: number;
  /** RSS growth per subscription, from half of them held to all of them. */
  perSubscriptionKiB: number;
  /** The median of the updates' times, and each of them. */
  fanOutMs: number;
  roundsMs: number[];
}

/**
 * Memory per subscription is the slope between half of the subscriptions held and all of them,
 * not the growth from idle: a server's idle RSS still holds what its start freed (an in-memory
 * PGlite's initdb instance) until the allocator gives it back, at no fixed time, which made the
 * growth from idle come out negative in some runs.
 */
async function measure(
  name: string,
  server: Started,
  query: string,
  trigger: (update: number) => Promise<void>,
  /** What tells one update from the next in a subscription's message (a tick, a task). */
  updateOf: (data: unknown) => unknown,
): Promise<Result> {
  const idleMiB = rssMiB(server.pid);
  const clients: Client[] = [];
  let seen = 0;
  let allSeen = () => {};
  // The update each subscription last counted: it counts the first message of the next one.
  const counted: unknown[] = [];
  let subscribed = 0;
  /** Opens `count` connections, 100 at a time, each with its subscriptions; then lets them land. */
  const hold = async (count: number) => {
    const opened: Client[] = [];
    for (let i = 0; i < count; i += 100) {
      opened.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(100, count - i) }, () =>
            connect(server.url, server.apiKey),
          ),
        )),
      );
    }
    for (const client of opened) {
      for (let j = 0; j < perConnection; j++) {
        const id = subscribed++;
        client.subscribe(
          { query },
          {
            next: ({ data }) => {
              const update = updateOf(data);
              if (counted[id] === update) return;
              counted[id] = update;
              if (++seen === total) allSeen();
            },
            error: () => {},
            complete: () => {},
          },
        );
      }
    }
    clients.push(...opened);
    // Let every subscribe land: 3 s for the full run, less for the few of a quick one.
    await new Promise((resolve) => setTimeout(resolve, Math.min(3_000, 500 + connections)));
    return rssMiB(server.pid);
  };
  const half = Math.floor(connections / 2);
  const halfMiB = await hold(half);
  const heldMiB = await hold(connections - half);
  const perSubscriptionKiB = ((heldMiB - halfMiB) * 1024) / ((connections - half) * perConnection);
  const roundsMs: number[] = [];
  for (let update = 1; update <= updates; update++) {
    seen = 0;
    const everyone = new Promise<void>((resolve) => {
      allSeen = resolve;
    });
    const t0 = performance.now();
    await trigger(update);
    await everyone;
    roundsMs.push(performance.now() - t0);
  }
  await Promise.all(clients.map((c) => c.dispose()));
  const fanOutMs = [...roundsMs].sort((a, b) => a - b)[Math.floor((roundsMs.length - 1) / 2)]!;
  return { name, idleMiB, heldMiB, perSubscriptionKiB, fanOutMs, roundsMs };
}

const stop = (server: Started) => stopServer(server, 5_000);

const bare = await start('./servers/bare.ts');
const baseline = await measure(
  'bare graphql-ws (in-memory emitter)',
  bare,
  'subscription { ticks }',
  async (update) => {
    await fetch(`${bare.url}/?tick=${update}`, { method: 'POST' });
  },
  (data) => (data as { ticks: number }).ticks,
);
await stop(bare);

const atelier = await start('./servers/atelier.ts');
const ours = await measure(
  'atelier myTaskUpdates (a real submission)',
  atelier,
  'subscription { myTaskUpdates { taskId status } }',
  async () => {
    const res = await fetch(`${atelier.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${atelier.apiKey}` },
      body: JSON.stringify({
        query:
          'mutation { generateImage(input: { modelId: "mdl_bench-noop", prompt: "x" }) { taskId } }',
      }),
    });
    await res.text();
  },
  // Each update is a new generation's `queued`: no worker runs it (servers/atelier.ts).
  (data) => (data as { myTaskUpdates: { taskId: string } }).myTaskUpdates.taskId,
);
await stop(atelier);

console.log(`\n${total} subscriptions on ${connections} connections, node ${process.version}\n`);
console.log(
  `server                                      RSS idle MiB   RSS held MiB   KiB/subscription   all saw one update ms (median of ${updates})`,
);
for (const r of [baseline, ours]) {
  console.log(
    `${r.name.padEnd(43)} ${r.idleMiB.toFixed(0).padStart(12)} ${r.heldMiB.toFixed(0).padStart(14)} ${r.perSubscriptionKiB.toFixed(1).padStart(18)} ${r.fanOutMs.toFixed(0).padStart(23)}   ${r.roundsMs.map((ms) => ms.toFixed(0)).join(' ')}`,
  );
}
const ratio = (a: number, b: number) => (a / b).toFixed(2);
console.log(
  `\natelier / bare: memory per subscription ×${ratio(ours.perSubscriptionKiB, baseline.perSubscriptionKiB)}, fan-out time ×${ratio(ours.fanOutMs, baseline.fanOutMs)}`,
);
report([
  {
    bench: 'ws',
    measure: 'memory per subscription',
    atelier: ours.perSubscriptionKiB,
    baseline: baseline.perSubscriptionKiB,
    baselineName: 'bare graphql-ws',
    unit: 'KiB',
    higherIsBetter: false,
  },
  {
    bench: 'ws',
    measure: `all ${total} subscribers saw one update`,
    atelier: ours.fanOutMs,
    baseline: baseline.fanOutMs,
    baselineName: 'bare graphql-ws',
    unit: 'ms',
    higherIsBetter: false,
  },
]);
