import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { RemoteDeps } from './remote-deps.ts';

/**
 * {@link exchange} as one call of `backend`, traced when the deps trace (a client span, and
 * `traceparent` on the request).
 */
export function providerExchange(
  deps: Pick<RemoteDeps, 'traceCall'>,
  backend: string,
  url: string,
  init: RequestInit,
  o: { signal: AbortSignal; connectTimeoutMs: number },
): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase();
  const send = (headers: Record<string, string>) => {
    if (Object.keys(headers).length === 0) return exchange(url, init, o);
    const merged = new Headers(init.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return exchange(url, { ...init, headers: merged }, o);
  };
  if (deps.traceCall === undefined) return send({});
  return deps.traceCall(
    { name: method, method, url, attributes: { 'atelier.backend': backend } },
    send,
  );
}

/** Statuses whose responses have no body (the Response constructor refuses one). */
const nullBodyStatuses = new Set([101, 103, 204, 205, 304]);

/**
 * One HTTP exchange, answered as a fetch `Response` whose body streams from the socket.
 * Node's own client rather than fetch, for the one thing fetch cannot bound: the time to
 * connect (a provider that does not answer SYN is told apart from one that thinks for
 * minutes). `signal` aborts the exchange, body included, with its reason.
 */
export async function exchange(
  url: string,
  init: RequestInit,
  o: { signal: AbortSignal; connectTimeoutMs: number },
): Promise<Response> {
  // A Request serialises every body fetch accepts (JSON text, bytes, FormData with its
  // boundary) and fills in Content-Type the way fetch would.
  const prepared = new Request(url, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body ?? null,
  });
  const body = prepared.body === null ? null : Buffer.from(await prepared.arrayBuffer());
  const headers: Record<string, string> = Object.fromEntries(prepared.headers);
  if (body !== null) headers['content-length'] = String(body.length);
  o.signal.throwIfAborted();
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    const req = send(target, { method: prepared.method, headers, signal: o.signal }, (res) =>
      resolve(toResponse(res)),
    );
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => req.destroy(new Error(`no connection within ${o.connectTimeoutMs} ms`)),
        o.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.on('error', (error) => reject(o.signal.aborted ? o.signal.reason : error));
    req.end(body ?? undefined);
  });
}

function toResponse(res: IncomingMessage): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const status = res.statusCode ?? 502;
  if (nullBodyStatuses.has(status)) res.resume();
  const body = nullBodyStatuses.has(status) ? null : (Readable.toWeb(res) as ReadableStream);
  return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
}
