import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before } from 'node:test';
import { type App, type AppOverrides, buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Clock } from '../../src/shared/clock.ts';
import type { Backend, Database } from '../../src/store/database.ts';
import { createTestDatabase } from './database.ts';
import { freePort } from './net.ts';

/** A running app on 127.0.0.1 with an ephemeral port, and everything it logged. */
export interface TestApp {
  readonly app: App;
  readonly url: string;
  /** The listener of `METRICS_PORT`, when the test set one. */
  readonly metricsUrl: string | null;
  /** Every log line written so far, as one string. */
  logs(): string;
  /**
   * The first log entry (written before or after the call) for which `match` holds: a signal
   * to wait for instead of sleeping. Fails after `timeoutMs` (a bound, not a wait).
   */
  logged(match: (entry: LogEntry) => boolean, timeoutMs?: number): Promise<LogEntry>;
  close(): Promise<void>;
}

/** One parsed JSON log line. */
export type LogEntry = Readonly<Record<string, unknown>>;

/** Starts the real app (real HTTP) on a shared test database; the database stays open. */
export async function startTestApp(
  database: Database,
  options: {
    clock?: Clock;
    env?: Record<string, string>;
    port?: number;
    cimdFetch?: AppOverrides['cimdFetch'];
    webhookNetwork?: AppOverrides['webhookNetwork'];
    webSocketLimits?: AppOverrides['webSocketLimits'];
    signInPause?: AppOverrides['signInPause'];
  } = {},
): Promise<TestApp> {
  const lines: string[] = [];
  const entries: LogEntry[] = [];
  const waiting = new Set<(entry: LogEntry) => void>();
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      const line = String(chunk);
      lines.push(line);
      try {
        const entry = JSON.parse(line) as LogEntry;
        entries.push(entry);
        for (const notify of waiting) notify(entry);
      } catch {
        // not one JSON line: kept in logs() only
      }
      done();
    },
  });
  const logged = (match: (entry: LogEntry) => boolean, timeoutMs = 10_000) => {
    const found = entries.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<LogEntry>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(notify);
        reject(new Error(`no matching log entry within ${timeoutMs} ms:\n${lines.join('')}`));
      }, timeoutMs);
      const notify = (entry: LogEntry) => {
        if (!match(entry)) return;
        clearTimeout(timer);
        waiting.delete(notify);
        resolve(entry);
      };
      waiting.add(notify);
    });
  };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-test-'));
  // A free port is chosen before the app is built (its public URL names it), so another process,
  // or the other backend's suite beside this one, can take it first: then the app is closed and
  // built again on another. An app that fails to listen is always closed: left running, its
  // workers would keep the test process alive after its tests.
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const config = loadConfig({
      env: {
        LOG_LEVEL: 'debug',
        DATA_DIR: dataDir,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        TASK_POLL_MS: '100',
        // Tests poll hard; rate limits have their own tests (http/rate-limits).
        RATE_LIMIT_PER_WINDOW: '0',
        RATE_LIMIT_AUTH_PER_WINDOW: '0',
        ...options.env,
      },
      cwd: process.cwd(),
    });
    const app = await buildApp(config, {
      database,
      logStream,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.cimdFetch ? { cimdFetch: options.cimdFetch } : {}),
      ...(options.webhookNetwork ? { webhookNetwork: options.webhookNetwork } : {}),
      ...(options.webSocketLimits ? { webSocketLimits: options.webSocketLimits } : {}),
      ...(options.signInPause ? { signInPause: options.signInPause } : {}),
    });
    let address: string;
    let metricsUrl: string | null;
    try {
      address = await app.http.listen({ host: '127.0.0.1', port });
      const { metrics } = app.config;
      metricsUrl =
        app.metricsHttp === null || metrics.port === null
          ? null
          : await app.metricsHttp.listen({ host: metrics.host, port: metrics.port });
    } catch (error) {
      await app.close();
      const taken = (error as { code?: unknown }).code === 'EADDRINUSE';
      if (taken && options.port === undefined && attempt < 5) continue;
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
    return {
      app,
      url: address,
      metricsUrl,
      logs: () => lines.join(''),
      logged,
      close: async () => {
        await app.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
}

/**
 * Where every test clock starts unless a test names another instant: a fixed noon UTC years
 * away from any day the suite runs on.
 */
export const testClockStart = Date.parse('2011-03-14T12:00:00Z');

/** How far from the real time a test clock must stay: farther than any lifetime Atelier gives. */
const farFromToday = 400 * 24 * 3_600_000; // 400 days

/**
 * A clock the test moves by hand. It never starts near the real date: a test that signed on
 * one clock and checked on another (the real one) then fails on every run, at once, instead of
 * passing today and failing an hour later, when the day the clock was fixed at is past.
 */
export class TestClock implements Clock {
  #now: number;

  constructor(start = testClockStart) {
    if (Math.abs(start - Date.now()) < farFromToday) {
      throw new Error(
        `A test clock must start far from today (${new Date(start).toISOString()} is within 400 days of it): pick a fixed instant years away, or leave the default.`,
      );
    }
    this.#now = start;
  }

  now(): Date {
    return new Date(this.#now);
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}

/**
 * The usual suite scaffolding: a fresh database of `backend` and an app on it before the
 * suite, both closed after it. `set` receives them for the suite's own variables.
 */
export function withTestApp(
  backend: Backend,
  options: Parameters<typeof startTestApp>[1],
  set: (started: { database: Database; t: TestApp }) => void,
): void {
  let started: { database: Database; t: TestApp } | undefined;
  before(async () => {
    const database = await createTestDatabase(backend);
    started = { database, t: await startTestApp(database, options) };
    set(started);
  });
  after(async () => {
    await started?.t.close();
    await started?.database.close();
  });
}
