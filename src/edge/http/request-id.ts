import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const acceptable = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * A request id for logs and error bodies: the caller's `X-Request-Id` when it is a short,
 * plain token (so a proxy's id carries through), a fresh UUID otherwise.
 */
export function requestIdOf(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && acceptable.test(incoming) ? incoming : randomUUID();
}
