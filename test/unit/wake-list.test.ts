import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { WakeList } from '../../src/jobs/wake-list.ts';

/** Which of `waits` have ended, after the promise jobs queued so far have run. */
async function ended(waits: Promise<void>[]): Promise<boolean[]> {
  const done = waits.map(() => false);
  for (const [i, wait] of waits.entries()) void wait.then(() => (done[i] = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('WakeList (the task runner’s sleeping slots)', () => {
  it('wakeOne ends the longest wait only; the others sleep on', async () => {
    const list = new WakeList();
    const waits = [list.wait(60_000), list.wait(60_000), list.wait(60_000)];
    assert.equal(list.size, 3);
    list.wakeOne();
    assert.deepEqual(await ended(waits), [true, false, false]);
    assert.equal(list.size, 2);
    list.wakeAll();
    assert.deepEqual(await ended(waits), [true, true, true]);
    assert.equal(list.size, 0);
    list.wakeOne(); // nothing waiting: nothing happens
  });

  it('a wait ends at its deadline without a wake-up, and leaves the list', async (t) => {
    mock.timers.enable({ apis: ['setTimeout'] });
    t.after(() => mock.timers.reset());
    const list = new WakeList();
    const short = list.wait(100);
    const long = list.wait(1_000);
    mock.timers.tick(99);
    assert.deepEqual(await ended([short, long]), [false, false]);
    mock.timers.tick(1);
    assert.deepEqual(await ended([short, long]), [true, false]);
    assert.equal(list.size, 1);
    // The next wake-up goes to the one still waiting, not to the one whose deadline came.
    list.wakeOne();
    assert.deepEqual(await ended([short, long]), [true, true]);
  });
});
