import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  backoffMs,
  isRetryableStatus,
  maxRetryAfterMs,
  parseRetryAfter,
  retryDelayMs,
} from '../../src/engines/remote/retry-timing.ts';

const now = Date.parse('2026-11-23T16:00:00Z');
const asked = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), now);

describe('Retry-After, as a provider asks for a wait', () => {
  it('reads delay-seconds, fractional seconds and retry-after-ms (which wins)', () => {
    assert.equal(asked({ 'retry-after': '3' }), 3000);
    assert.equal(asked({ 'retry-after': '0.5' }), 500);
    assert.equal(asked({ 'retry-after': '3', 'retry-after-ms': '250' }), 250);
  });

  it('reads an HTTP date from the clock given, and a past date as "now"', () => {
    assert.equal(asked({ 'retry-after': 'Mon, 23 Nov 2026 16:00:07 GMT' }), 7000);
    assert.equal(asked({ 'retry-after': 'Mon, 23 Nov 2026 15:59:00 GMT' }), 0);
  });

  it('ignores what it cannot read, rather than waiting a surprising time', () => {
    for (const value of ['', 'soon', '-1', '1e3', '12 34']) {
      assert.equal(asked({ 'retry-after': value }), null, value);
    }
    assert.equal(asked({ 'retry-after-ms': 'abc' }), null);
    assert.equal(asked({}), null);
  });
});

describe('the wait between attempts', () => {
  it('doubles from 0.5 s to at most 8 s, less up to a quarter of jitter', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 10].map((attempt) => backoffMs(attempt, 0)),
      [500, 1000, 2000, 4000, 8000, 8000, 8000],
    );
    assert.equal(backoffMs(1, 0.999), 375);
    for (let i = 0; i < 100; i++) {
      const wait = backoffMs(3);
      assert.ok(wait >= 1500 && wait <= 2000, String(wait));
    }
  });

  it("takes the provider's wait, cut to a minute when it asks for more", () => {
    assert.equal(retryDelayMs(1200, 1, 0), 1200);
    assert.equal(retryDelayMs(0, 2, 0), 0);
    assert.equal(retryDelayMs(maxRetryAfterMs, 1, 0), maxRetryAfterMs);
    // A provider asking for five minutes is not retried in half a second (review 17, item 12).
    assert.equal(retryDelayMs(maxRetryAfterMs + 1, 1, 0), maxRetryAfterMs);
    assert.equal(retryDelayMs(300_000, 3, 0), maxRetryAfterMs);
    assert.equal(retryDelayMs(null, 2, 0), 1000);
  });

  it('retries 408, 409, 429 and 5xx, never another 4xx', () => {
    assert.deepEqual(
      [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503].filter(isRetryableStatus),
      [408, 409, 429, 500, 502, 503],
    );
  });
});
