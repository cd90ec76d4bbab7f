import type { FastifyRequest } from 'fastify';

/**
 * Paths whose query string is itself a credential: signed media and upload URLs carry their
 * signature (`exp`, `sig`, or an object store's `X-Amz-*`), and anyone holding the logged URL
 * could use it until it expires.
 */
const signedPaths = /^\/(?:uploads|media)\//;

/** Query parameters that carry a credential wherever they appear (RFC 6750 §2.3 and kin). */
const secretParams = new Set(['access_token', 'id_token', 'token', 'code', 'sig']);

const redacted = '[redacted]';

/**
 * The URL as the request log may hold it: the query of a signed path goes whole, and any
 * credential-bearing parameter elsewhere keeps its name but loses its value. Pino's `redact`
 * only matches object paths, not parts of a string, hence this serializer.
 */
export function loggableUrl(url: string): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  const path = url.slice(0, at);
  if (signedPaths.test(path)) return `${path}?${redacted}`;
  const params = url.slice(at + 1).split('&');
  return `${path}?${params.map(redactParam).join('&')}`;
}

function redactParam(param: string): string {
  const eq = param.indexOf('=');
  const rawName = eq === -1 ? param : param.slice(0, eq);
  let name: string;
  try {
    name = decodeURIComponent(rawName.replaceAll('+', ' ')).toLowerCase();
  } catch {
    // A name that does not decode cannot be judged: keep nothing of its value.
    return `${rawName}=${redacted}`;
  }
  return secretParams.has(name) ? `${rawName}=${redacted}` : param;
}

/** Fastify's request serializer with {@link loggableUrl} in place of the raw URL. */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: loggableUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
