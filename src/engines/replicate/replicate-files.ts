import type { EngineFailure } from '../engine.ts';
import type { SlotValue } from './replicate-template.ts';
import type { RawValue } from './replicate-values.ts';

/**
 * How an input file reaches the model (protocol doc, "Files and file inputs"): Replicate
 * recommends a `data:` URI only for small files (it does not store them), and an uploaded
 * file's URL (`POST /v1/files` → `urls.get`) for anything larger. Files larger than
 * `inlineMaxBytes` are uploaded; only the files the template uses are sent at all.
 */

/** Uploads bytes to Replicate's Files API: the file's URL, or the failure that ends the task. */
export type Upload = (
  bytes: Buffer,
  type: string,
) => Promise<{ readonly ok: true; readonly url: string } | EngineFailure>;

/** The values to fill the template with, files sent inline or uploaded; or a failure. */
export async function sendableValues(
  values: Readonly<Record<string, RawValue>>,
  used: ReadonlySet<string>,
  inlineMaxBytes: number,
  upload: Upload,
): Promise<{ ok: true; values: Record<string, SlotValue> } | EngineFailure> {
  const sendable: Record<string, SlotValue> = {};
  for (const [name, value] of Object.entries(values)) {
    if (!Buffer.isBuffer(value)) {
      sendable[name] = value;
    } else if (used.has(name)) {
      const type = sniffType(value);
      if (value.length <= inlineMaxBytes) {
        sendable[name] = `data:${type};base64,${value.toString('base64')}`;
      } else {
        const uploaded = await upload(value, type);
        if (!uploaded.ok) return uploaded;
        sendable[name] = uploaded.url;
      }
    }
  }
  return { ok: true, values: sendable };
}

/** The media type read from the bytes' signature. */
export function sniffType(bytes: Buffer): string {
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString('latin1');
  if (bytes[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) {
    return 'audio/mpeg';
  }
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  return 'application/octet-stream';
}

/** A file name for the upload, from its type (`input.png`). */
export function uploadName(type: string): string {
  const extension =
    { 'image/jpeg': 'jpg', 'audio/mpeg': 'mp3', 'application/octet-stream': 'bin' }[type] ??
    type.split('/')[1];
  return `input.${extension}`;
}
