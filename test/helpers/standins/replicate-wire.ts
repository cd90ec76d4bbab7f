import type { ServerResponse } from 'node:http';
import { isFileInput } from './replicate-files.ts';

/**
 * Replicate's header grammar and error body (protocol doc, "Request headers on create",
 * "Errors"): `Prefer: wait` / `wait=N` with N from 1 to 60; `Cancel-After` as `30`, `30s`,
 * `5m`, `1h30m45s` (bare number = seconds), at least 5 seconds; create bodies limited to their
 * schema's keys (`additionalProperties: false`) with `input` required; RFC 7807 problem details.
 */

/** Seconds to wait, undefined without the header, 'invalid' for a malformed value. */
export function parsePreferWait(
  header: string | string[] | undefined,
): number | 'invalid' | undefined {
  if (header === undefined) return undefined;
  const match = /^wait(?:=(\d+))?$/.exec(String(header).trim());
  if (match === null) return 'invalid';
  const seconds = match[1] === undefined ? 60 : Number(match[1]);
  return seconds >= 1 && seconds <= 60 ? seconds : 'invalid';
}

/** The deadline's distance in seconds, undefined without the header, 'invalid' when malformed. */
export function parseCancelAfter(
  header: string | string[] | undefined,
): number | 'invalid' | undefined {
  if (header === undefined) return undefined;
  const text = String(header).trim();
  if (/^\d+$/.test(text)) return Number(text) >= 5 ? Number(text) : 'invalid';
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (match === null || text === '') return 'invalid';
  const [, h = '0', m = '0', s = '0'] = match;
  const seconds = Number(h) * 3600 + Number(m) * 60 + Number(s);
  return seconds >= 5 ? seconds : 'invalid';
}

/** An RFC 7807 problem, as Replicate's API answers errors. */
export function problem(res: ServerResponse, status: number, title: string, detail: string): void {
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify({ title, detail, status }));
}

/** What is wrong with a create body, one `- field: reason` line each (empty when valid). */
export function invalidFields(
  body: Record<string, unknown>,
  allowed: readonly string[],
  model: { readonly required?: readonly string[]; readonly fileInputs?: readonly string[] },
): string[] {
  const extra = Object.keys(body).filter((key) => !allowed.includes(key));
  const problems = extra.map((key) => `- (root): Additional property ${key} is not allowed`);
  const input = body.input;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return [...problems, '- (root): input is required'];
  }
  const values = input as Record<string, unknown>;
  const missing = (model.required ?? []).filter((key) => values[key] === undefined);
  const badFiles = (model.fileInputs ?? []).filter(
    (key) => values[key] !== undefined && !isFileInput(values[key]),
  );
  return [
    ...problems,
    ...missing.map((key) => `- input: ${key} is required`),
    ...badFiles.map((key) => `- input.${key}: Does not match format 'uri'`),
  ];
}
