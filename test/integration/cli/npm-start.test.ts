import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../../helpers/net.ts';

// Issue 20: stopping `npm start` with SIGTERM left the server running. npm passes the signal to
// the shell it runs the script in, which ends without passing it on; bin/atelier now stops
// when its launcher is gone. (SIGINT sent to npm alone is passed to the shell too, which waits
// for the server: only Ctrl-C's SIGINT, to the whole group, reaches the server.)

const root = new URL('../../../', import.meta.url).pathname;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npm start` on a new data directory, once the server says it is ready. */
async function npmStart(
  dataDir: string,
  env: Record<string, string | undefined> = process.env,
): Promise<{ npm: ChildProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const npm = spawn('npm', ['start'], {
    cwd: root,
    env: {
      ...env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a terminal gives a command: Ctrl-C signals the whole group.
    detached: true,
  });
  let said = '';
  await new Promise<void>((resolve, reject) => {
    const hear = (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('Atelier is ready')) resolve();
    };
    npm.stdout!.on('data', hear);
    npm.stderr!.on('data', hear);
    npm.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${said}`)));
  });
  return { npm, url };
}

describe('npm start', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  // SIGTERM as a process manager or `kill` sends it, to npm alone; SIGINT as Ctrl-C in a
  // terminal sends it, to npm's whole process group.
  for (const [signal, to] of [
    ['SIGTERM', 'npm'],
    ['SIGINT', 'group'],
  ] as const) {
    it(`stops the server on ${signal} to ${to === 'npm' ? 'npm' : "npm's process group (Ctrl-C)"}: no orphan, lock released, port closed`, {
      timeout: 90_000,
    }, async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-npm-start-'));
      dirs.push(dataDir);
      const { npm, url } = await npmStart(dataDir);
      // The server writes its pid into the data directory's lock.
      const lock = path.join(dataDir, 'atelier.lock');
      const server = Number(readFileSync(lock, 'utf8'));
      assert.notEqual(server, npm.pid, 'the server is not npm itself');
      assert.equal((await fetch(`${url}/readyz`)).status, 200);

      const exited = once(npm, 'exit');
      if (to === 'npm') npm.kill(signal);
      else process.kill(-npm.pid!, signal);
      await exited;
      // The server is not npm's child: its end is seen by asking for it (bounded, not a sleep).
      const deadline = performance.now() + 15_000;
      while (alive(server) && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(alive(server), false, `server ${server} still running after npm's ${signal}`);
      assert.equal(existsSync(lock), false, 'the data directory lock was released (a clean stop)');
      await assert.rejects(fetch(`${url}/readyz`), 'nothing listens on the port any more');
    });
  }

  // Issue 34: glibc's per-thread malloc arenas kept 50-60 MiB after a few hundred images, and
  // its rising mmap threshold left the main heap fragmented.
  it("runs the server with glibc's malloc settings on Linux, an operator's own kept", {
    skip: process.platform !== 'linux' && 'glibc and /proc are Linux’s',
    timeout: 90_000,
  }, async () => {
    const { MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, GLIBC_TUNABLES, ...inherited } = process.env;
    for (const [set, expected] of [
      [{}, ['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=65536']],
      [{ MALLOC_ARENA_MAX: '8' }, ['MALLOC_ARENA_MAX=8', 'MALLOC_MMAP_THRESHOLD_=65536']],
    ] as const) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-npm-start-'));
      dirs.push(dataDir);
      const { npm } = await npmStart(dataDir, { ...inherited, ...set });
      const server = Number(readFileSync(path.join(dataDir, 'atelier.lock'), 'utf8'));
      try {
        const environment = readFileSync(`/proc/${server}/environ`, 'utf8').split('\0');
        assert.deepEqual(environment.filter((entry) => entry.startsWith('MALLOC_')).sort(), [
          ...expected,
        ]);
      } finally {
        const exited = once(npm, 'exit');
        npm.kill('SIGTERM');
        await exited;
        const deadline = performance.now() + 15_000;
        while (alive(server) && performance.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  });
});
