// Start and footprint: how long `npm start` (`bin/atelier serve`, with its V8 flags) takes until `/readyz`
// answers 200 — on a new data directory (the first start: the embedded database created,
// migrated, the first account made) and again on the same one (a restart) — and the resident
// memory of the idle server after each (and its peak), against a floor measured in the same
// run: bare Fastify opening PGlite on its own data directory (servers/floor.server.ts), with
// PGlite's and V8's defaults. Prints medians.
//
//   node bench/start/start.bench.ts [--runs 3]
//
// Issue 19's targets are absolute: first start < 3 s, restart < 1.5 s, idle RSS < 200 MiB.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { npmStart, residentMiB, root, serverEnv, stop } from '../npm-start.ts';
import { type BenchRow, report } from '../report.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
/** How long the server is left idle before its memory is read. */
const settleMs = 2_000;

const targets = {
  atelier: { name: 'Atelier', args: [...npmStart] },
  floor: {
    name: 'Fastify + PGlite',
    args: [new URL('servers/floor.server.ts', import.meta.url).pathname],
  },
} as const;

interface Sample {
  readyMs: number;
  /** Resident memory when idle, and its peak since the process began (VmHWM). */
  rssMiB: number;
  peakMiB: number;
}

/** One start of `target` on `dataDir`: time until `/readyz` is 200, then the idle RSS. */
async function startOnce(target: keyof typeof targets, dataDir: string): Promise<Sample> {
  const { url, env } = await serverEnv(dataDir);
  const began = performance.now();
  const child = spawn(process.execPath, targets[target].args, {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Kept, not shown (the first start prints its banner and key there): said if it fails.
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    said += chunk.toString();
  });
  try {
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`${targets[target].name} exited (${code}) before it was ready:\n${said}`);
    });
    await Promise.race([untilReady(url), exited]);
    const readyMs = performance.now() - began;
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    return { readyMs, ...residentMiB(child.pid!) };
  } finally {
    await stop(child);
  }
}

/** Polls `/readyz` every 10 ms: readiness is the server's answer, nothing it prints. */
async function untilReady(url: string): Promise<void> {
  for (;;) {
    const status = await fetch(`${url}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `runs` first starts, each on a new data directory, each followed by a restart on it. */
async function measure(target: keyof typeof targets) {
  const first: Sample[] = [];
  const again: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = await mkdtemp(path.join(tmpdir(), 'atelier-start-'));
    try {
      first.push(await startOnce(target, dir));
      again.push(await startOnce(target, dir));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const of = (samples: Sample[], key: keyof Sample) => median(samples.map((s) => s[key]));
  return {
    firstMs: of(first, 'readyMs'),
    firstRss: of(first, 'rssMiB'),
    againMs: of(again, 'readyMs'),
    againRss: of(again, 'rssMiB'),
    firstPeak: of(first, 'peakMiB'),
    againPeak: of(again, 'peakMiB'),
  };
}

// Alternated target by target would interleave their disk caches; each runs its own set.
const floor = await measure('floor');
const atelier = await measure('atelier');

const rows: BenchRow[] = [
  ['first start, ready (/readyz 200)', atelier.firstMs, floor.firstMs, 'ms'],
  ['restart, ready', atelier.againMs, floor.againMs, 'ms'],
  ['idle RSS after the first start', atelier.firstRss, floor.firstRss, 'MiB'],
  ['idle RSS after a restart', atelier.againRss, floor.againRss, 'MiB'],
  ['peak RSS, first start', atelier.firstPeak, floor.firstPeak, 'MiB'],
  ['peak RSS, restart', atelier.againPeak, floor.againPeak, 'MiB'],
].map(([measure, a, b, unit]) => ({
  bench: 'start',
  measure: measure as string,
  atelier: a as number,
  baseline: b as number,
  baselineName: targets.floor.name,
  unit: unit as string,
  higherIsBetter: false,
}));

console.log(
  `median of ${runs} run${runs === 1 ? '' : 's'}, idle ${settleMs} ms before reading RSS`,
);
console.table(
  rows.map((r) => ({
    measure: r.measure,
    atelier: `${r.atelier.toFixed(0)} ${r.unit}`,
    floor: `${r.baseline.toFixed(0)} ${r.unit}`,
    ratio: `${(r.atelier / r.baseline).toFixed(2)}×`,
  })),
);
report(rows);
