// Where a task stands (issue 31 §6): its place in its pool's queue and when it should start and
// finish, estimated from the pool's capacity and its backends' recent run times. An estimate is
// given only where Atelier can tell; otherwise it is null, never a guess dressed as a number.

/** One backend of a task's pool, as the estimate needs it. */
export interface PoolSlotState {
  readonly id: string;
  readonly up: boolean;
  /** Null: no cap. */
  readonly maxConcurrent: number | null;
  /** When each of its runs now was claimed. */
  readonly runningSince: readonly Date[];
  /** Mean seconds of its recent successful runs, and how many runs that mean is of. */
  readonly meanRunSeconds: number | null;
  readonly recentRuns: number;
}

/** A queued or running task, as the estimate needs it. */
export interface PlacedTask {
  readonly status: 'queued' | 'running';
  /** Queued tasks of its pool ahead of it in the order they are started in. */
  readonly ahead: number;
  /** A running task's backend and when its run was claimed. */
  readonly backendId: string | null;
  readonly claimedAt: Date | null;
}

export interface TaskPlace {
  /** Tasks ahead of it in its pool's queue; null once it runs. */
  readonly queuePosition: number | null;
  readonly estimatedStartAt: Date | null;
  readonly estimatedFinishAt: Date | null;
  /** Seconds from the estimate's `now` to its start (0 once running); null when not known. */
  readonly startsInSeconds: number | null;
}

/** The pool's mean run time, each backend's mean weighted by its number of runs. */
export function poolMeanRunSeconds(pool: readonly PoolSlotState[]): number | null {
  let runs = 0;
  let seconds = 0;
  for (const b of pool) {
    if (b.meanRunSeconds === null || b.recentRuns === 0) continue;
    runs += b.recentRuns;
    seconds += b.meanRunSeconds * b.recentRuns;
  }
  return runs === 0 ? null : seconds / runs;
}

/**
 * Where `task` stands at `now`. A running task: started when claimed, finishing a mean run
 * later (its backend's, else its pool's), never before now. A queued task: each slot of the
 * backends in rotation frees at a time (now for a free one; a run's claim plus its backend's
 * mean, or now if overdue), and the task at position p takes the (p mod S)-th slot to free,
 * p div S turnovers later (S slots, a turnover being the pool's mean run); with an unlimited
 * backend in rotation, it starts at once. No recorded runs (unless a slot is free for it), or
 * no backend in rotation: no estimate.
 */
export function placeOf(task: PlacedTask, pool: readonly PoolSlotState[], now: Date): TaskPlace {
  const poolMean = poolMeanRunSeconds(pool);
  if (task.status === 'running') {
    const own = pool.find((b) => b.id === task.backendId);
    const mean = own?.meanRunSeconds ?? poolMean;
    const start = task.claimedAt;
    return {
      queuePosition: null,
      estimatedStartAt: start,
      estimatedFinishAt: start === null || mean === null ? null : later(now, at(start, mean)),
      startsInSeconds: 0,
    };
  }
  const start = queuedStart(task.ahead, pool, poolMean, now);
  return {
    queuePosition: task.ahead,
    estimatedStartAt: start,
    estimatedFinishAt: start === null || poolMean === null ? null : at(start, poolMean),
    startsInSeconds: start === null ? null : (start.getTime() - now.getTime()) / 1000,
  };
}

function queuedStart(
  ahead: number,
  pool: readonly PoolSlotState[],
  poolMean: number | null,
  now: Date,
): Date | null {
  const up = pool.filter((b) => b.up);
  if (up.length === 0) return null;
  if (up.some((b) => b.maxConcurrent === null)) return now;
  const frees: number[] = [];
  for (const b of up) {
    const mean = b.meanRunSeconds ?? poolMean;
    for (const since of b.runningSince.slice(0, b.maxConcurrent ?? 0)) {
      // A run whose length nobody knows yet frees its slot at an unknown time: last.
      frees.push(
        mean === null
          ? Number.POSITIVE_INFINITY
          : Math.max(now.getTime(), at(since, mean).getTime()),
      );
    }
    for (let i = b.runningSince.length; i < (b.maxConcurrent ?? 0); i++) frees.push(now.getTime());
  }
  frees.sort((x, y) => x - y);
  const slot = frees[ahead % frees.length];
  if (slot === undefined || slot === Number.POSITIVE_INFINITY) return null;
  const turnovers = Math.floor(ahead / frees.length);
  if (turnovers === 0) return new Date(slot);
  return poolMean === null ? null : at(new Date(slot), turnovers * poolMean);
}

/** "queued, 3 ahead, about 40 s": a queued task's place in words (MCP progress messages). */
export function describePlace(place: TaskPlace): string {
  if (place.queuePosition === null) return 'queued';
  const parts = ['queued', `${place.queuePosition} ahead`];
  const seconds = place.startsInSeconds;
  if (seconds !== null) parts.push(seconds < 1 ? 'starting now' : `about ${roughly(seconds)}`);
  return parts.join(', ');
}

/** A wait a person reads: whole seconds under a minute, then minutes, then hours. */
function roughly(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function at(from: Date, seconds: number): Date {
  return new Date(from.getTime() + Math.round(seconds * 1000));
}

function later(a: Date, b: Date): Date {
  return a.getTime() >= b.getTime() ? a : b;
}
