// What the start and memory benchmarks share: the command line `npm start` runs, a free port,
// a process's resident memory, and stopping a server process.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/** The repository's root, where `npm start` runs. */
export const root = new URL('../', import.meta.url).pathname;

/** What `npm start` runs after `node`: its V8 flags, `bin/atelier serve`. */
export const npmStart: readonly string[] = (
  JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  }
).scripts.start
  .split(' ')
  .slice(1);

/**
 * What a benchmark's server is started with: `dataDir`, a free port on 127.0.0.1 and the URL it
 * answers on, warnings only in its log.
 */
export async function serverEnv(dataDir: string): Promise<{ url: string; env: NodeJS.ProcessEnv }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      LOG_LEVEL: 'warn',
    },
  };
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A process's resident memory now (VmRSS) and at its peak (VmHWM), in MiB. */
export function residentMiB(pid: number): { rssMiB: number; peakMiB: number } {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) throw new Error('reading a process’s memory needs Linux /proc');
  const status = readFileSync(file, 'utf8');
  const mib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024;
  return { rssMiB: mib('VmRSS'), peakMiB: mib('VmHWM') };
}

/** SIGTERM, then SIGKILL if the process has not exited within 5 s. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  child.kill('SIGKILL');
}
