import { WebSocket } from 'ws';

/** One JSON event from ComfyUI's `/ws` (`{type, data}`); binary preview frames are dropped. */
export interface ComfyEvent {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

const handshakeTimeoutMs = 10_000; // 10 seconds to open the socket

/** `path` under the server's base URL (which may carry a reverse proxy's path prefix). */
export function endpoint(baseUrl: URL, path: string): URL {
  const base = baseUrl.href.endsWith('/') ? baseUrl.href : `${baseUrl.href}/`;
  return new URL(path.replace(/^\//, ''), base);
}

/**
 * ComfyUI's WebSocket for one client id. ComfyUI sends a prompt's events (`executing`,
 * `progress`, `execution_error`…) only to the socket of the `client_id` it was submitted with,
 * and a reconnection with the same id replaces the old socket, so a task uses an id of its own
 * and the next attempt of the task hears the prompt its first attempt submitted.
 */
export class ComfySocket {
  readonly #ws: WebSocket;
  readonly #listeners = new Set<(event: ComfyEvent) => void>();
  readonly #closed: Promise<void>;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return;
      const event = parseEvent(String(raw));
      if (event !== undefined) for (const listener of [...this.#listeners]) listener(event);
    });
    this.#closed = new Promise((resolve) => ws.once('close', () => resolve()));
  }

  /** Opens `ws(s)://…/ws?clientId=`; rejects when the server cannot be reached or refuses. */
  static open(baseUrl: URL, clientId: string, signal: AbortSignal): Promise<ComfySocket> {
    const url = endpoint(baseUrl, `ws?clientId=${encodeURIComponent(clientId)}`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    signal.throwIfAborted();
    const ws = new WebSocket(url, { handshakeTimeout: handshakeTimeoutMs });
    const socket = new ComfySocket(ws);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => ws.terminate();
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (error?: Error): void => {
        ws.off('open', onOpen);
        ws.off('error', onError);
        signal.removeEventListener('abort', onAbort);
        if (error === undefined) resolve(socket);
        else reject(signal.aborted ? signal.reason : error);
      };
      const onOpen = (): void => settle();
      const onError = (error: Error): void => settle(error);
      ws.once('open', onOpen);
      ws.once('error', onError);
      // After `open`, errors end in `close`, which `closed` reports.
      ws.on('error', () => {});
    });
  }

  /** Calls `listener` for every event until the returned function is called. */
  listen(listener: (event: ComfyEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves when the socket has closed, for whatever reason. */
  get closed(): Promise<void> {
    return this.#closed;
  }

  close(): void {
    this.#listeners.clear();
    this.#ws.terminate();
  }
}

function parseEvent(text: string): ComfyEvent | undefined {
  try {
    const event = JSON.parse(text) as { type?: unknown; data?: unknown };
    if (typeof event.type !== 'string') return undefined;
    const data = typeof event.data === 'object' && event.data !== null ? event.data : {};
    return { type: event.type, data: data as Record<string, unknown> };
  } catch {
    return undefined; // not JSON: ignored, as ComfyUI's own frontend does
  }
}
