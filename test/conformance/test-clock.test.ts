import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TestClock } from '../helpers/app.ts';

// Issue 30 §1: a test clock fixed at 2026-11-27 12:00 passed until 13:00 that day, then failed
// everywhere, because one check still read the real time. A test clock never starts near today,
// so such a check fails on the first run instead.

test('a test clock refuses to start within 400 days of the real date', () => {
  for (const near of [Date.now(), Date.now() + 3_600_000, Date.now() - 30 * 86_400_000]) {
    assert.throws(() => new TestClock(near), /must start far from today/);
  }
});

test('the default test clock is years from today and moves only when told', () => {
  const clock = new TestClock();
  const start = clock.now().getTime();
  assert.ok(Math.abs(start - Date.now()) > 400 * 86_400_000);
  assert.equal(clock.now().getTime(), start);
  clock.advance(61_000);
  assert.equal(clock.now().getTime(), start + 61_000);
});
