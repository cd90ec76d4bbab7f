import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { every } from '../../src/shared/periodic.ts';

describe('every', () => {
  it('runs a task again and again, never two at once, and a failure does not stop it', async () => {
    let runs = 0;
    let running = 0;
    let overlapped = false;
    const fourRuns = Promise.withResolvers<void>();
    const periodic = every(5, async () => {
      runs++;
      running++;
      overlapped ||= running > 1;
      await sleep(15); // slower than the interval
      running--;
      if (runs === 4) fourRuns.resolve();
      if (runs === 2) throw new Error('a bad run');
    });
    // Waits for the runs themselves, not for a time that a loaded machine may not keep.
    await fourRuns.promise;
    await periodic.stop();
    assert.equal(overlapped, false);
  });

  it('stop() tells the run under way, waits for it, and nothing runs after it', async () => {
    let finished = false;
    let sawAbort = false;
    let started = 0;
    const periodic = every(1, async (signal) => {
      started++;
      await sleep(40);
      sawAbort = signal.aborted;
      finished = true;
    });
    await sleep(10);
    await periodic.stop();
    assert.equal(finished, true, 'the run under way ended before stop() returned');
    assert.equal(sawAbort, true, 'the run was told to stop');
    const startedAtStop = started;
    await sleep(30);
    assert.equal(started, startedAtStop);
  });
});
