import { RemoteOutputError } from './remote-deps.ts';

/**
 * A response body read whole, refused once it passes `maxBytes` (a declared Content-Length
 * is refused before reading): a provider's output is buffered for checks and storage, so its
 * size is capped like any download.
 */
export async function readBody(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new RemoteOutputError(`the answer is larger than ${maxBytes} bytes`);
  }
  if (response.body === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => {});
      throw new RemoteOutputError(`the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The first `limit` bytes of a body as text (an error message); the rest is not read. */
export async function readPrefix(response: Response, limit: number): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size >= limit) break; // leaving the loop cancels the stream
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}
