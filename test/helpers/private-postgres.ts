import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from './net.ts';

const binaries = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why a private PostgreSQL cannot run here, or false when it can. */
export const withoutPrivatePostgres: string | false = !existsSync(path.join(binaries, 'postgres'))
  ? `no PostgreSQL server binaries in ${binaries} (set POSTGRES_BIN)`
  : false;

/**
 * A PostgreSQL server of the test's own, in a temporary directory on a free port, that the
 * test may stop and start again (the shared server of TEST_DATABASE_URL must never be). As
 * root it runs as the `postgres` user, since PostgreSQL refuses to run as root.
 */
export class PrivatePostgres {
  readonly url: string;
  readonly #dir: string;
  readonly #port: number;
  readonly #owner: { uid: number; gid: number } | undefined;
  #server: ChildProcess | undefined;

  private constructor(dir: string, port: number, owner: { uid: number; gid: number } | undefined) {
    this.#dir = dir;
    this.#port = port;
    this.#owner = owner;
    this.url = `postgres://postgres@127.0.0.1:${port}/atelier`;
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-pg-'));
    const owner = userInfo().uid === 0 ? postgresUser() : undefined;
    if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
    execFileSync(
      path.join(binaries, 'initdb'),
      ['-D', path.join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync'],
      { stdio: 'ignore', ...owner },
    );
    const server = new PrivatePostgres(dir, await freePort(), owner);
    await server.start();
    const admin = new pg.Client({
      connectionString: server.url.replace(/\/atelier$/, '/postgres'),
    });
    await admin.connect();
    await admin.query('CREATE DATABASE atelier');
    await admin.end();
    return server;
  }

  /** Starts the server (again, on the same port and data) and waits until it accepts. */
  async start(): Promise<void> {
    this.#server = spawn(
      path.join(binaries, 'postgres'),
      [
        ...['-D', path.join(this.#dir, 'data'), '-p', String(this.#port), '-k', this.#dir],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=100'],
      ],
      { stdio: 'ignore', ...this.#owner },
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const client = new pg.Client({
        connectionString: this.url.replace(/\/atelier$/, '/postgres'),
      });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }

  /** A fast shutdown, as a restart or failover does: connections are cut, work rolls back. */
  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGINT');
    await exited;
    this.#server = undefined;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

function postgresUser(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}
