import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  describePlace,
  type PoolSlotState,
  placeOf,
  poolMeanRunSeconds,
} from '../../src/domain/queue-place.ts';

// Where a task stands (issue 31 §6): the estimate from a pool's slots and its recent runs.

const now = new Date('2031-03-01T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const seconds = (d: Date | null) => (d === null ? null : (d.getTime() - now.getTime()) / 1000);
const backend = (fields: Partial<PoolSlotState> & { id: string }): PoolSlotState => ({
  up: true,
  maxConcurrent: 1,
  runningSince: [ago(0)],
  meanRunSeconds: 10,
  recentRuns: 20,
  ...fields,
});
const queued = (ahead: number) =>
  ({ status: 'queued', ahead, backendId: null, claimedAt: null }) as const;

describe('placeOf', () => {
  it('a queued task in a full pool takes the slot that frees first, then each turnover after', () => {
    // Two boxes of one slot, 10 s a run: one run began 8 s ago, the other 3 s ago.
    const pool = [
      backend({ id: 'a', runningSince: [ago(8)] }),
      backend({ id: 'b', runningSince: [ago(3)] }),
    ];
    const starts = [0, 1, 2, 3].map((ahead) =>
      seconds(placeOf(queued(ahead), pool, now).estimatedStartAt),
    );
    assert.deepEqual(starts, [2, 7, 12, 17]);
    const first = placeOf(queued(0), pool, now);
    assert.equal(first.queuePosition, 0);
    assert.equal(seconds(first.estimatedFinishAt), 12);
    assert.equal(describePlace(placeOf(queued(3), pool, now)), 'queued, 3 ahead, about 17 s');
  });

  it('the estimate does not drift as time passes: it is anchored on the runs’ claims', () => {
    const pool = [backend({ id: 'a', runningSince: [ago(8)] })];
    const later = new Date(now.getTime() + 1000);
    assert.equal(
      placeOf(queued(1), pool, now).estimatedStartAt?.getTime(),
      placeOf(queued(1), pool, later).estimatedStartAt?.getTime(),
    );
  });

  it('a free slot for it: it starts now; an overdue run frees its slot now', () => {
    const pool = [
      backend({ id: 'a', maxConcurrent: 2, runningSince: [] }),
      backend({ id: 'b', runningSince: [ago(30)] }),
    ];
    assert.deepEqual(
      [0, 1, 2, 3].map((ahead) => seconds(placeOf(queued(ahead), pool, now).estimatedStartAt)),
      [0, 0, 0, 10],
    );
    assert.equal(describePlace(placeOf(queued(0), pool, now)), 'queued, 0 ahead, starting now');
  });

  it('an unlimited backend in rotation: it starts now, whatever is ahead', () => {
    const pool = [backend({ id: 'a', maxConcurrent: null, runningSince: [ago(1), ago(2)] })];
    assert.equal(seconds(placeOf(queued(39), pool, now).estimatedStartAt), 0);
  });

  it('no runs recorded, or every backend out: a position but no estimate', () => {
    const fresh = [backend({ id: 'a', meanRunSeconds: null, recentRuns: 0 })];
    const unknown = placeOf(queued(2), fresh, now);
    assert.deepEqual(
      [unknown.queuePosition, unknown.estimatedStartAt, unknown.estimatedFinishAt],
      [2, null, null],
    );
    assert.equal(describePlace(unknown), 'queued, 2 ahead');
    const down = placeOf(queued(0), [backend({ id: 'a', up: false, runningSince: [] })], now);
    assert.equal(down.estimatedStartAt, null);
    // A model without recorded backends: no pool to estimate from.
    assert.equal(placeOf(queued(0), [], now).estimatedStartAt, null);
    // A free slot needs no history: it starts now, its finish unknown.
    const free = placeOf(
      queued(0),
      [backend({ id: 'a', meanRunSeconds: null, recentRuns: 0, runningSince: [] })],
      now,
    );
    assert.deepEqual([seconds(free.estimatedStartAt), free.estimatedFinishAt], [0, null]);
  });

  it('a running task finishes its backend’s mean run after its claim, never before now', () => {
    const claimedAt = ago(4);
    const pool = [
      backend({ id: 'a', meanRunSeconds: 10 }),
      backend({ id: 'b', meanRunSeconds: 60 }),
    ];
    const running = { status: 'running', ahead: 0, backendId: 'a', claimedAt } as const;
    const place = placeOf(running, pool, now);
    assert.equal(place.queuePosition, null);
    assert.equal(place.estimatedStartAt, claimedAt);
    assert.equal(seconds(place.estimatedFinishAt), 6);
    const overdue = placeOf({ ...running, claimedAt: ago(30) }, pool, now);
    assert.equal(seconds(overdue.estimatedFinishAt), 0);
  });

  it('the pool’s mean weighs each backend by its runs', () => {
    const pool = [
      backend({ id: 'a', meanRunSeconds: 10, recentRuns: 3 }),
      backend({ id: 'b', meanRunSeconds: 30, recentRuns: 1 }),
      backend({ id: 'c', meanRunSeconds: null, recentRuns: 0 }),
    ];
    assert.equal(poolMeanRunSeconds(pool), 15);
  });

  it('a long wait reads in minutes, then hours', () => {
    const pool = [backend({ id: 'a', meanRunSeconds: 600, runningSince: [ago(0)] })];
    assert.equal(describePlace(placeOf(queued(1), pool, now)), 'queued, 1 ahead, about 20 min');
    assert.equal(describePlace(placeOf(queued(17), pool, now)), 'queued, 17 ahead, about 3.0 h');
  });
});
