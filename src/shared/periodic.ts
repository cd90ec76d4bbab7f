/** A task run every so often; `stop()` ends the schedule and waits for a run under way. */
export interface Periodic {
  stop(): Promise<void>;
}

/**
 * Runs `task` every `intervalMs`, never two at once (a slow run delays the next), without
 * keeping the process alive. A run's failure is the task's to report; it never stops the schedule.
 */
export function every(intervalMs: number, task: () => Promise<void>): Periodic {
  let running: Promise<void> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = task()
        .catch(() => {})
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
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
