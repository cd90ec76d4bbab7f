import assert from 'node:assert/strict';
import { it } from 'node:test';
import { pauseMs } from '../../src/rate-limits/sign-in-throttle.ts';

it('an email is slowed only once it has as many failures as one address may make, at most 1 s', () => {
  assert.deepEqual(
    [0, 9, 10, 11, 12, 13, 14, 50, 1e9].map((failures) => pauseMs(failures, 10)),
    [0, 0, 100, 200, 400, 800, 1000, 1000, 1000],
  );
});
