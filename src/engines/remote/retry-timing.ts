// When to try a provider again: its own word first (`retry-after-ms`, `Retry-After`), else an
// exponential backoff with jitter — the same rules the official OpenAI SDK follows
// (../shared/protocols/openai-media.md "Retries and idempotency").

/**
 * The longest wait taken at a provider's word: a longer `Retry-After` is cut to it (the task's
 * deadline still bounds the whole call), not replaced by a short backoff that would spend the
 * remaining attempts while the provider is still unwilling.
 */
export const maxRetryAfterMs = 60_000; // 1 minute

const baseDelayMs = 500;
const maxDelayMs = 8_000;

/** Whether an HTTP status is worth another attempt: 408, 409, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait a response asks for, in ms, or null when it asks for none (or for something
 * unreadable): `retry-after-ms` (milliseconds), else `Retry-After` as delay-seconds or an
 * HTTP date (RFC 9110 §10.2.3) measured from `nowMs`. A date in the past means "now" (0).
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null },
  nowMs: number,
): number | null {
  const ms = headers.get('retry-after-ms')?.trim();
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its weekday; a bare number that failed the test above is not one.
  if (!/[A-Za-z]/.test(value)) return null;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/**
 * The backoff before attempt `attempt + 1` (attempt counts from 1): 0.5 s × 2^(attempt−1),
 * at most 8 s, less up to a quarter of it at random so that many clients do not return in
 * step. `random` is in [0, 1).
 */
export function backoffMs(attempt: number, random: number = Math.random()): number {
  const full = Math.min(baseDelayMs * 2 ** Math.max(0, attempt - 1), maxDelayMs);
  return Math.round(full * (1 - 0.25 * random));
}

/**
 * The wait before the next attempt: the provider's when it gave one (at most
 * {@link maxRetryAfterMs}), else backoff.
 */
export function retryDelayMs(asked: number | null, attempt: number, random?: number): number {
  if (asked !== null && asked >= 0) return Math.min(asked, maxRetryAfterMs);
  return backoffMs(attempt, random);
}
