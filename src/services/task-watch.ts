import type { TaskEvent, TaskEvents } from '../events/task-events.ts';

export type ChangedEvent = Extract<TaskEvent, { type: 'changed' }>;

/**
 * Task changes of one account as an async iterable, for subscriptions. A slow consumer cannot
 * grow memory without bound: pending changes are coalesced per task (only the latest event is
 * kept — the task's current state is read when it is delivered), and at most `maxPending`
 * distinct tasks wait; beyond that the oldest is dropped.
 */
export function watchTaskChanges(
  events: TaskEvents,
  filter: { accountId: string; taskId?: string },
  signal: AbortSignal,
  maxPending = 1_000,
): AsyncIterable<ChangedEvent> {
  const pending = new Map<string, ChangedEvent>();
  let wake: (() => void) | undefined;
  const unsubscribe = events.subscribe((event: TaskEvent) => {
    if (event.type !== 'changed' || event.accountId !== filter.accountId) return;
    if (filter.taskId !== undefined && event.taskId !== filter.taskId) return;
    pending.delete(event.taskId);
    pending.set(event.taskId, event);
    if (pending.size > maxPending) pending.delete(pending.keys().next().value!);
    wake?.();
  });
  const stop = () => {
    unsubscribe();
    wake?.();
  };
  signal.addEventListener('abort', stop, { once: true });
  return {
    async *[Symbol.asyncIterator]() {
      try {
        while (!signal.aborted) {
          if (pending.size === 0) {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            wake = undefined;
            continue;
          }
          const [taskId, event] = pending.entries().next().value!;
          pending.delete(taskId);
          yield event;
        }
      } finally {
        signal.removeEventListener('abort', stop);
        unsubscribe();
      }
    },
  };
}
