import assert from 'node:assert/strict';
import sharp from 'sharp';
import { Ffmpeg, type ProbeResult } from '../../src/engines/media/ffmpeg.ts';
import { decodeAudio } from '../../src/engines/speech/audio.ts';
import { errorCodes, graphql } from './graphql.ts';

export const ffmpeg = Ffmpeg.resolve();

/** Runs a GraphQL operation that must succeed; returns its data. */
export async function gqlOk<T>(
  url: string,
  apiKey: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const res = await graphql<T>(url, { query, variables, apiKey });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!;
}

export interface UploadOutcome {
  mediaId: string;
  uploadUrl: string;
  status: number;
  body: { media?: Record<string, unknown>; error?: Record<string, unknown> & { code: string } };
}

export interface CreatedUpload {
  mediaId: string;
  uploadUrl: string;
  expiresAt: string;
}

/** `createUpload`, which must succeed: where to PUT the bytes, and until when. */
export async function createUpload(
  url: string,
  apiKey: string,
  input: { kind: 'image' | 'audio' | 'video'; mimeType: string; bytes: number; filename?: string },
): Promise<CreatedUpload> {
  const data = await gqlOk<{ createUpload: CreatedUpload }>(
    url,
    apiKey,
    'mutation U($input: CreateUploadInput!) { createUpload(input: $input) { mediaId uploadUrl expiresAt } }',
    { input },
  );
  return data.createUpload;
}

/** createUpload, then PUT the bytes to the signed URL, as a client would. */
export async function upload(
  url: string,
  apiKey: string,
  file: {
    kind: 'image' | 'audio' | 'video';
    mimeType: string;
    bytes: Buffer;
    declaredBytes?: number;
  },
): Promise<UploadOutcome> {
  const created = await createUpload(url, apiKey, {
    kind: file.kind,
    mimeType: file.mimeType,
    bytes: file.declaredBytes ?? file.bytes.length,
    filename: `test.${file.mimeType.split('/')[1]}`,
  });
  const put = await fetch(created.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': file.mimeType },
    body: new Uint8Array(file.bytes),
  });
  // Atelier answers with what it found; an object store answers with no JSON at all.
  const text = await put.text();
  const json = put.headers.get('content-type')?.startsWith('application/json') ?? false;
  const body = json ? (JSON.parse(text) as UploadOutcome['body']) : {};
  return { mediaId: created.mediaId, uploadUrl: created.uploadUrl, status: put.status, body };
}

/** Uploads and asserts the upload was accepted. */
export async function uploadOk(
  url: string,
  apiKey: string,
  file: Parameters<typeof upload>[2],
): Promise<string> {
  const outcome = await upload(url, apiKey, file);
  assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
  return outcome.mediaId;
}

/** A fresh download URL for media of the account, fetched. */
export async function download(url: string, apiKey: string, mediaId: string): Promise<Buffer> {
  const data = await gqlOk<{ getDownloadUrls: { url: string }[] }>(
    url,
    apiKey,
    'query D($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { url } }',
    { ids: [mediaId] },
  );
  const res = await fetch(data.getDownloadUrls[0]!.url);
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

export function probe(bytes: Buffer): Promise<ProbeResult> {
  return ffmpeg.probe(bytes);
}

/** Milliseconds of audio, measured by decoding (a piped WAV or MP3 does not state its length). */
export async function audioMs(bytes: Buffer): Promise<number> {
  const rate = 8000;
  const { samples } = await decodeAudio(ffmpeg, bytes, rate, new AbortController().signal);
  return (samples.length / rate) * 1000;
}

/** A test picture: a gradient with a disc, as PNG (or JPEG). */
export async function testPicture(
  width = 256,
  height = 256,
  format: 'png' | 'jpeg' = 'png',
): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
<defs><linearGradient id="g"><stop offset="0" stop-color="#2a6"/><stop offset="1" stop-color="#fd4"/></linearGradient></defs>
<rect width="100%" height="100%" fill="url(#g)"/><circle cx="${width / 2}" cy="${height / 2.5}" r="${width / 4}" fill="#c53"/></svg>`;
  return sharp(Buffer.from(svg)).toFormat(format).toBuffer();
}

/** `seconds` of a 440 Hz tone followed by as much silence, as WAV (made by ffmpeg). */
export function testTone(seconds: number, format: 'wav' | 'mp3' = 'wav'): Promise<Buffer> {
  const args = ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`];
  return ffmpeg.run({
    args: [...args, '-af', 'apad', '-t', String(2 * seconds), '-ac', '1', '-f', format, 'pipe:1'],
  });
}
