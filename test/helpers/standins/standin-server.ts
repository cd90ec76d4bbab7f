import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The part every protocol stand-in shares: a real HTTP server on 127.0.0.1 (random port) that
 * records each request it receives, can answer the next N matching requests with a canned
 * fault (429, 5xx), can stall a request until the test releases it, and can stall a response
 * body halfway. Waiting is by signal: `received` resolves when a matching request arrives.
 */

/** One request as the stand-in received it. */
export interface RecordedRequest {
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Header names lower-cased, as node:http gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  /** The body parsed as JSON; undefined when it is not JSON. */
  readonly json: unknown;
}

export type RequestMatch = (request: RecordedRequest) => boolean;

/** A response the stand-in gives instead of its own behaviour. */
export interface CannedResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

/** A request or body held by the stand-in until the test lets it go. */
export interface Hold {
  /** Resolves with the request once the stand-in is holding it. */
  readonly reached: Promise<RecordedRequest>;
  release(): void;
}

export type RouteHandler = (request: RecordedRequest, res: ServerResponse) => Promise<void> | void;

interface Fault {
  readonly match: RequestMatch;
  readonly response: CannedResponse;
  left: number;
}

interface PendingHold {
  readonly match: RequestMatch;
  readonly reach: (request: RecordedRequest) => void;
  readonly released: Promise<void>;
  readonly release: () => void;
}

const receivedTimeoutMs = 10_000; // 10 seconds: a missing request fails the test with a listing

function pendingHold(match: RequestMatch): { pending: PendingHold; hold: Hold } {
  let reach!: (request: RecordedRequest) => void;
  const reached = new Promise<RecordedRequest>((resolve) => {
    reach = resolve;
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { pending: { match, reach, released, release }, hold: { reached, release } };
}

export class StandinServer {
  readonly requests: RecordedRequest[] = [];
  /** Errors thrown by the stand-in's own handlers (a stand-in bug, not a provider answer). */
  readonly handlerErrors: unknown[] = [];
  #server: Server;
  #url = '';
  #faults: Fault[] = [];
  #holds: PendingHold[] = [];
  #stalls: PendingHold[] = [];
  #watchers = new Set<() => void>();

  constructor(
    handler: RouteHandler,
    onUpgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
  ) {
    this.#server = createServer((req, res) => {
      this.#serve(req, res, handler).catch((error: unknown) => {
        this.handlerErrors.push(error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`stand-in error: ${String(error)}`);
      });
    });
    if (onUpgrade !== undefined) this.#server.on('upgrade', onUpgrade);
  }

  /** Base URL, e.g. `http://127.0.0.1:41234`, once listening. */
  get url(): string {
    return this.#url;
  }

  /** Listens on 127.0.0.1, on a free port or on `port`. */
  async listen(port = 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('stand-in has no port');
    this.#url = `http://127.0.0.1:${address.port}`;
  }

  /** Answers the next `times` requests that match with `response`, then behaves normally. */
  failNext(match: RequestMatch, times: number, response: CannedResponse): void {
    if (!Number.isInteger(times) || times < 1) throw new Error(`times must be ≥ 1, got ${times}`);
    this.#faults.push({ match, response, left: times });
  }

  /** Holds the next matching request before the stand-in handles it. */
  hold(match: RequestMatch): Hold {
    const { pending, hold } = pendingHold(match);
    this.#holds.push(pending);
    return hold;
  }

  /** For the next matching request, sends headers and half the body, then waits for release. */
  stallBody(match: RequestMatch): Hold {
    const { pending, hold } = pendingHold(match);
    this.#stalls.push(pending);
    return hold;
  }

  /** Every request received so far that matches. */
  matching(match: RequestMatch): RecordedRequest[] {
    return this.requests.filter(match);
  }

  /** Resolves with the first matching request, already received or yet to come. */
  received(match: RequestMatch, what = 'a matching request'): Promise<RecordedRequest> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.requests.find(match);
        if (found === undefined) return false;
        clearTimeout(timer);
        this.#watchers.delete(watcher);
        resolve(found);
        return true;
      };
      const watcher = (): void => {
        check();
      };
      const timer = setTimeout(() => {
        this.#watchers.delete(watcher);
        const seen = this.requests.map((r) => `${r.method} ${r.path}`).join(', ');
        reject(new Error(`stand-in never received ${what}; received: [${seen}]`));
      }, receivedTimeoutMs);
      this.#watchers.add(watcher);
      check();
    });
  }

  /** Sends bytes, honouring a `stallBody` hold on this request. */
  async sendBytes(
    request: RecordedRequest,
    res: ServerResponse,
    bytes: Buffer,
    headers: Record<string, string>,
  ): Promise<void> {
    res.writeHead(200, { ...headers, 'content-length': String(bytes.length) });
    const stall = take(this.#stalls, request);
    if (stall === undefined) {
      res.end(bytes);
      return;
    }
    const half = Math.floor(bytes.length / 2);
    res.write(bytes.subarray(0, half));
    stall.reach(request);
    await stall.released;
    res.end(bytes.subarray(half));
  }

  async close(): Promise<void> {
    for (const pending of [...this.#holds, ...this.#stalls]) pending.release();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async #serve(req: IncomingMessage, res: ServerResponse, handler: RouteHandler): Promise<void> {
    const request = await record(req);
    this.requests.push(request);
    for (const watcher of [...this.#watchers]) watcher();
    const fault = this.#faults.find((f) => f.left > 0 && f.match(request));
    if (fault !== undefined) {
      fault.left -= 1;
      res.writeHead(fault.response.status, fault.response.headers ?? {});
      res.end(fault.response.body ?? '');
      return;
    }
    const hold = take(this.#holds, request);
    if (hold !== undefined) {
      hold.reach(request);
      await hold.released;
      if (res.destroyed) return;
    }
    await handler(request, res);
  }
}

function take(list: PendingHold[], request: RecordedRequest): PendingHold | undefined {
  const index = list.findIndex((pending) => pending.match(request));
  if (index < 0) return undefined;
  return list.splice(index, 1)[0];
}

async function record(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const url = new URL(req.url ?? '/', 'http://stand-in');
  let json: unknown;
  try {
    json = body.length === 0 ? undefined : JSON.parse(body.toString('utf8'));
  } catch {
    json = undefined;
  }
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    headers: { ...req.headers },
    body,
    json,
  };
}

/** Writes a JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** Writes a bare status with an empty body. */
export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': '0' });
  res.end();
}
