import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './net.ts';

/** A Redis every test may use (CI sets it to the machine's 127.0.0.1:6379); keys get a prefix. */
export const sharedRedisUrl = process.env.TEST_REDIS_URL || undefined;

/** A key prefix no other test run shares. */
export const testKeyPrefix = () => `atelier-test-${randomBytes(6).toString('hex')}:`;

const binary = process.env.REDIS_SERVER ?? 'redis-server';

/** Why a private Redis cannot run here, or false when it can. */
export const withoutPrivateRedis: string | false = (() => {
  try {
    execFileSync(binary, ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return `no ${binary} on PATH (set REDIS_SERVER)`;
  }
})();

/**
 * A Redis server of the test's own on a free port, keeping nothing on disk, that the test may
 * kill and start again on the same port (the shared one must never be).
 */
export class PrivateRedis {
  readonly url: string;
  readonly #port: number;
  #server: ChildProcess | undefined;

  private constructor(port: number) {
    this.#port = port;
    this.url = `redis://127.0.0.1:${port}`;
  }

  static async create(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  /** Starts the server (empty: nothing is persisted) and waits until it answers PING. */
  async start(): Promise<void> {
    this.#server = spawn(
      binary,
      ['--port', String(this.#port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null });
      client.on('error', () => {}); // not up yet: the loop tries again
      try {
        await client.connect();
        await client.ping();
        client.disconnect();
        return;
      } catch (error) {
        client.disconnect();
        if (Date.now() > deadline) throw error;
        await sleep(50);
      }
    }
  }

  /** Kills the server at once, as a crash does. */
  async kill(): Promise<void> {
    const server = this.#server;
    if (server === undefined || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
    this.#server = undefined;
  }
}
