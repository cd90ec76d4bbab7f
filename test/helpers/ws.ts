import { type Client, createClient, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';

export interface WsClient {
  client: Client;
  /** The close event of the socket, when it closes. */
  closed: Promise<{ code: number; reason: string }>;
}

/** A graphql-ws client on a real socket; `apiKey` (and any `headers`) go in the handshake. */
export function wsClient(
  baseUrl: string,
  options: { apiKey?: string; idpToken?: string; headers?: Record<string, string> } = {},
): WsClient {
  let closed!: (event: { code: number; reason: string }) => void;
  const closedPromise = new Promise<{ code: number; reason: string }>((resolve) => {
    closed = resolve;
  });
  const headers = {
    ...options.headers,
    ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
  };
  const client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers });
      }
    },
    connectionParams: options.idpToken === undefined ? undefined : { idpToken: options.idpToken },
    retryAttempts: 0,
    lazy: false,
    on: { closed: (event) => closed(event as { code: number; reason: string }) },
  });
  return { client, closed: closedPromise };
}

/** Collects a subscription's results until it completes or errors. */
export function collect<T>(client: Client, query: string, variables?: Record<string, unknown>) {
  const results: FormattedExecutionResult<T, unknown>[] = [];
  const waiting = new Set<() => void>();
  let done!: (outcome: { error?: unknown }) => void;
  const finished = new Promise<{ error?: unknown }>((resolve) => {
    done = resolve;
  });
  const unsubscribe = client.subscribe<T>(
    { query, variables },
    {
      next: (r) => {
        results.push(r);
        for (const check of waiting) check();
      },
      error: (error) => done({ error }),
      complete: () => done({}),
    },
  );
  /** Resolves once the results so far satisfy `holds` (a signal to wait for, not a sleep). */
  const until = (
    holds: (so: typeof results) => boolean,
    timeoutMs = 15_000,
  ): Promise<typeof results> =>
    new Promise((resolve, reject) => {
      if (holds(results)) return resolve(results);
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`subscription results never matched: ${JSON.stringify(results)}`));
      }, timeoutMs);
      const check = () => {
        if (!holds(results)) return;
        clearTimeout(timer);
        waiting.delete(check);
        resolve(results);
      };
      waiting.add(check);
    });
  /**
   * Resolves as `finished` does; after `timeoutMs` without an end (the server kept a
   * subscription it should have ended or refused), fails naming the results so far.
   */
  const ended = (timeoutMs = 15_000): Promise<{ error?: unknown }> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`subscription never ended: ${JSON.stringify(results)}`));
      }, timeoutMs);
      void finished.then((outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
    });
  return { results, finished, ended, unsubscribe, until };
}
