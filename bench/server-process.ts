// A benchmark's server runs in a process of its own, so the load generator (in the benchmark's
// process) never shares its event loop. Each server script prints one line of JSON when it is
// ready (its URL, and whatever credentials the benchmark needs), and stops on SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** A started server: its process and what its ready line said. */
export type ServerProcess<Ready> = Ready & { readonly child: ChildProcess };

/**
 * Starts `script` (a path, or a URL relative to the caller's module) with `env` added to this
 * process's environment; resolves with its ready line. A server that exits before that line
 * fails the run instead of hanging it.
 */
export async function startServer<Ready extends object>(
  script: string | URL,
  env: Record<string, string> = {},
): Promise<ServerProcess<Ready>> {
  const file = script instanceof URL ? script.pathname : script;
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const settled = new AbortController();
  try {
    const [line] = (await Promise.race([
      once(createInterface({ input: child.stdout! }), 'line', { signal: settled.signal }),
      once(child, 'exit', { signal: settled.signal }).then(([code]) => {
        throw new Error(`${file} exited (${code}) before it was ready`);
      }),
    ])) as [string];
    return { ...(JSON.parse(line) as Ready), child };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    settled.abort();
  }
}

/** SIGTERM, then SIGKILL after `graceMs` if the server is still there. */
export async function stopServer(
  server: { readonly child: ChildProcess },
  graceMs = 3_000,
): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
  child.kill('SIGKILL');
}

/** A `graphql-transport-ws` client of `url`'s `/graphql`, connected, with an API key if given. */
export function connectGraphqlWs(url: string, apiKey?: string): Promise<Client> {
  const headers = apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
  return new Promise((resolve, reject) => {
    const client = createClient({
      url: `${url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers });
        }
      },
      lazy: false,
      retryAttempts: 0,
      on: { connected: () => resolve(client), error: reject },
    });
  });
}
