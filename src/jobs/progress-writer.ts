import type { Db } from '../store/database.ts';
import { writeProgress } from '../store/task-queue.store.ts';

/** At most four progress writes a second; the last (1) always goes. */
const paceMs = 250;

/**
 * An engine's progress for one run: written under the run's lease, paced, in order, and each
 * write that took effect announced (`changed`), so subscriptions and MCP waits see the task
 * climb. `settled()` waits for the writes already asked.
 */
export function progressWriter(
  db: Db,
  task: { readonly id: string; readonly lease_token: string },
  changed: () => Promise<void>,
): { report(value: number): void; settled(): Promise<unknown> } {
  let writes: Promise<unknown> = Promise.resolve();
  let lastAt = Number.NEGATIVE_INFINITY;
  return {
    report(value) {
      const now = performance.now(); // elapsed time for pacing, not a date: monotonic
      if (now - lastAt < paceMs && value < 1) return;
      lastAt = now;
      writes = writes
        .then(async () => {
          if (await writeProgress(db, task.id, task.lease_token, value)) await changed();
        })
        .catch(() => {});
    },
    settled: () => writes,
  };
}
