import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { testModels } from './generation.ts';
import { freePort } from './net.ts';

const bin = new URL('../../bin/atelier', import.meta.url).pathname;
const run = promisify(execFile);

/**
 * The environment of a child `bin/atelier`: this process's, then `env`. Children share Node's
 * compile cache (V8 code and stripped TypeScript, checked against each file's content), so
 * only the first of the suite's many starts compiles the source tree: 0.6 s less CPU for each
 * later one. NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE in the environment still rule.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    NODE_COMPILE_CACHE: path.join(tmpdir(), 'node-compile-cache'),
    ...process.env,
    ...env,
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `bin/atelier` to completion in a child process, with `input` on its standard input. */
export async function atelier(
  args: readonly string[],
  env: Record<string, string>,
  input = '',
): Promise<CliResult> {
  try {
    const running = run(process.execPath, [bin, ...args], {
      env: childEnv(env),
      timeout: 60_000,
    });
    running.child.stdin?.end(input);
    const { stdout, stderr } = await running;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof e.code === 'number' ? e.code : -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    };
  }
}

/** A running `bin/atelier serve`, its output so far, and a way to stop it. */
export interface RunningServer {
  readonly child: ChildProcess;
  readonly url: string;
  stderr(): string;
  /** Its log (pino's JSON lines, on stdout) so far. */
  stdout(): string;
  /**
   * Resolves once `text` has appeared `times` times in the log (stdout), whenever written: a
   * signal to wait for instead of sleeping. Fails after `timeoutMs` (a bound, not a wait).
   */
  logged(text: string, times?: number, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: the process dies mid-work, as on a crash. */
  kill(): Promise<void>;
}

/**
 * Starts `bin/atelier serve` on a free port and waits until it is listening. Its public URL is
 * its own address unless `env` names another (nodes behind one load balancer share one), or
 * `publicHost` names this computer otherwise (`localhost`). `url` stays the bound address.
 */
export async function startServer(
  env: Record<string, string>,
  { publicHost = '127.0.0.1' }: { publicHost?: string } = {},
): Promise<RunningServer> {
  const port = await freePort();
  return startProcess(
    'serve',
    { ...env, PORT: String(port), PUBLIC_URL: env.PUBLIC_URL ?? `http://${publicHost}:${port}` },
    'Atelier is ready.',
    `http://127.0.0.1:${port}`,
  );
}

/** Worker settings for recovery tests: a short lease, so a dead worker's task returns in seconds. */
export function shortLeaseWorkerEnv(concurrency: number): Record<string, string> {
  return {
    MODELS: testModels,
    TASK_LEASE_MS: '1500',
    TASK_POLL_MS: '100',
    WORKER_CONCURRENCY: String(concurrency),
  };
}

/** Starts `bin/atelier worker` and waits until its slots run. */
export function startWorker(env: Record<string, string>): Promise<RunningServer> {
  return startProcess('worker', env, 'Atelier worker running', '');
}

async function startProcess(
  command: string,
  env: Record<string, string>,
  ready: string,
  url: string,
): Promise<RunningServer> {
  const child = spawn(process.execPath, [bin, command], {
    env: childEnv({
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_WINDOW: '0',
      RATE_LIMIT_AUTH_PER_WINDOW: '0',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (chunk) => {
    err += String(chunk);
  });
  // The log (pino, on stdout) is kept for `logged`.
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += String(chunk);
  });
  // A death by signal (V8 aborting, say) is written into stderr, so a test that prints
  // `stderr()` beside a wrong exit code says what happened.
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      if (signal !== null) err += `\n[${command} ended by ${signal}]\n`;
      resolve(code);
    }),
  );
  const deadline = Date.now() + 60_000;
  while (!err.includes(ready)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${command} did not start:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const occurrences = (text: string) => out.split(text).length - 1;
  const logged = (text: string, times = 1, timeoutMs = 15_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (occurrences(text) < times) return;
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve();
      };
      const timer = setTimeout(() => {
        child.stdout!.off('data', check);
        reject(new Error(`"${text}" not logged ${times} times within ${timeoutMs} ms:\n${out}`));
      }, timeoutMs);
      // Registered after the collector above, so `err` already holds the chunk.
      child.stdout!.on('data', check);
      check();
    });
  return {
    child,
    url,
    stderr: () => err,
    stdout: () => out,
    logged,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
