/** A task run every so often; `stop()` ends the schedule and waits for a run under way. */
export interface Periodic {
  stop(): Promise<void>;
}

/**
 * Runs `task` every `intervalMs`, never two at once (a slow run delays the next), without
 * keeping the process alive. `stop()` aborts the signal a run is given (a long run should
 * check it between steps) and waits for that run to end. A run's failure is the task's to
 * report; it never stops the schedule.
 */
export function every(intervalMs: number, task: (signal: AbortSignal) => Promise<void>): Periodic {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopping.signal.aborted) return;
    timer = setTimeout(() => {
      running = task(stopping.signal)
        .catch(() => {}) // reported by the task; the schedule goes on
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
