import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Clock } from '../../../src/shared/clock.ts';
import type { RecordedRequest } from './standin-server.ts';
import { sendJson } from './standin-server.ts';

/**
 * Replicate's Files API on the stand-in, as `../shared/protocols/replicate.md` ("Files and file
 * inputs") gives it: `POST /v1/files` multipart (`content` required, `filename`, `type`,
 * `metadata` as JSON) → 201 file object whose `urls.get` may be passed as a file input;
 * `GET /v1/files/{id}`; 413 `{"detail": "Files must be less than 100MB in size"}` over the
 * limit; 404 `{"detail": "File not found"}`. Also the file-input rule: a `data:` URI or an
 * HTTP(S) URL. Expiry length is unconfirmed; one day is used.
 */

export interface StoredFile {
  readonly id: string;
  readonly bytes: Buffer;
  readonly json: Record<string, unknown>;
}

const dayMs = 86_400_000; // 24 hours

export class ReplicateFiles {
  readonly stored = new Map<string, StoredFile>();
  #clock: Clock;
  #maxBytes: number;

  constructor(clock: Clock, maxBytes: number) {
    this.#clock = clock;
    this.#maxBytes = maxBytes;
  }

  async create(request: RecordedRequest, res: ServerResponse, base: string): Promise<void> {
    let form: FormData;
    try {
      form = await new Request('http://stand-in/v1/files', {
        method: 'POST',
        headers: { 'content-type': String(request.headers['content-type'] ?? '') },
        body: new Uint8Array(request.body),
      }).formData();
    } catch {
      sendJson(res, 400, { detail: 'Expected a multipart/form-data body' });
      return;
    }
    const content = form.get('content');
    if (!(content instanceof File)) {
      sendJson(res, 422, { detail: '- content: required' });
      return;
    }
    if (content.size > this.#maxBytes) {
      sendJson(res, 413, { detail: 'Files must be less than 100MB in size' });
      return;
    }
    let metadata: unknown = {};
    try {
      metadata = JSON.parse(String(form.get('metadata') ?? '{}'));
    } catch {
      sendJson(res, 422, { detail: '- metadata: must be JSON' });
      return;
    }
    const bytes = Buffer.from(await content.arrayBuffer());
    const id = randomBytes(13).toString('hex').slice(0, 26);
    const now = this.#clock.now();
    const json = {
      id,
      content_type: String(form.get('type') ?? (content.type || 'application/octet-stream')),
      size: bytes.length,
      checksums: { sha256: createHash('sha256').update(bytes).digest('hex') },
      metadata,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + dayMs).toISOString(),
      urls: { get: `${base}/v1/files/${id}` },
    };
    this.stored.set(id, { id, bytes, json });
    sendJson(res, 201, json);
  }

  get(id: string, res: ServerResponse): void {
    const file = this.stored.get(id);
    if (file === undefined) sendJson(res, 404, { detail: 'File not found' });
    else sendJson(res, 200, file.json);
  }
}

/** Whether a file input is one Replicate accepts: a `data:` URI or an HTTP(S) URL. */
export function isFileInput(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (/^data:[^;,]+(;[^,]*)?;base64,[A-Za-z0-9+/]*={0,2}$/.test(value)) return true;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}
