import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import path from 'node:path';

/**
 * The local channel through which the command line reaches a server that holds the embedded
 * database: PGlite is one process's database, so while `serve` runs, an operator command
 * cannot open it and asks the server to run it instead.
 *
 * A Unix domain socket at `DATA_DIR/control/atelier.sock`, in a directory of mode 0700 and with
 * mode 0600 itself: only the data directory's owner can connect (as only they can read the
 * database's files). One connection carries one request, a line of JSON, and one answer, a line
 * of JSON; a request longer than 64 KiB, or not finished within 10 s, is refused.
 */

/** What the command line asks: the command, its parsed options, and a password read from stdin. */
export interface ControlRequest {
  readonly command: string;
  readonly values: Readonly<Record<string, unknown>>;
  readonly password?: string;
}

/** The command's result, or its failure in the terms the command line prints it. */
export type ControlAnswer =
  | { readonly ok: true; readonly result: unknown }
  | {
      readonly ok: false;
      readonly error:
        | {
            readonly kind: 'app';
            readonly code: string;
            readonly message: string;
            readonly details: Readonly<Record<string, unknown>>;
          }
        | { readonly kind: 'usage'; readonly message: string }
        | { readonly kind: 'config'; readonly problems: readonly string[] };
    };

const maxRequestBytes = 64 * 1024;
const requestTimeoutMs = 10_000;

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, 'control', 'atelier.sock');
}

/**
 * Listens on the data directory's control socket, answering each request with `run`. Call it
 * only while holding the data directory's lock: a socket found there is then one a stopped
 * server left, and is replaced. Resolves with the function that stops listening and removes it.
 */
export async function listenForCommands(
  dataDir: string,
  run: (request: ControlRequest) => Promise<ControlAnswer>,
): Promise<() => Promise<void>> {
  const file = controlSocketPath(dataDir);
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // an existing directory keeps its mode otherwise
  rmSync(file, { force: true });
  const server = createServer((socket) => {
    answerOne(socket, run).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(file, 0o600);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(file, { force: true });
  };
}

async function answerOne(
  socket: Socket,
  run: (request: ControlRequest) => Promise<ControlAnswer>,
): Promise<void> {
  socket.setTimeout(requestTimeoutMs, () => socket.destroy());
  const line = await readLine(socket, maxRequestBytes);
  const request = line === null ? null : parseRequest(line);
  const answer: ControlAnswer =
    request === null
      ? {
          ok: false,
          error: {
            kind: 'usage',
            message: `A request is one line of JSON {"command","values"}, at most ${maxRequestBytes} bytes.`,
          },
        }
      : await run(request);
  socket.end(`${JSON.stringify(answer)}\n`);
}

function parseRequest(line: string): ControlRequest | null {
  try {
    const value = JSON.parse(line) as Partial<ControlRequest>;
    if (
      typeof value !== 'object' ||
      value === null ||
      typeof value.command !== 'string' ||
      typeof value.values !== 'object' ||
      value.values === null ||
      Array.isArray(value.values) ||
      (value.password !== undefined && typeof value.password !== 'string')
    ) {
      return null;
    }
    return value as ControlRequest;
  } catch {
    return null;
  }
}

/** The first line the peer sends, or null when it sends more than `max` bytes without one. */
function readLine(socket: Socket, max: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (value: string | null) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', reject);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      const newline = chunk.indexOf(0x0a);
      chunks.push(newline === -1 ? chunk : chunk.subarray(0, newline));
      size += newline === -1 ? chunk.length : newline;
      if (size > max) done(null);
      else if (newline !== -1) done(Buffer.concat(chunks).toString('utf8'));
    };
    const onEnd = () => done(size === 0 ? null : Buffer.concat(chunks).toString('utf8'));
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', reject);
  });
}

/**
 * Sends one request to the server holding `dataDir` and resolves with its answer; rejects when
 * no server listens there (ENOENT, ECONNREFUSED) or it does not answer within `timeoutMs`.
 */
export function askServer(
  dataDir: string,
  request: ControlRequest,
  timeoutMs = 60_000,
): Promise<ControlAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(controlSocketPath(dataDir));
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error('The running server did not answer the command in time.')),
    );
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    readLine(socket, 16 * 1024 * 1024).then((line) => {
      socket.destroy();
      if (line === null) reject(new Error('The running server gave no answer.'));
      else resolve(JSON.parse(line) as ControlAnswer);
    }, reject);
  });
}
