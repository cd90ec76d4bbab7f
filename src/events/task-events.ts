import { LocalEvents } from './local-events.ts';

/** What happens to tasks, for workers (wake up, abort) and, later, subscriptions. */
export type TaskEvent =
  /** A task waits for a worker (its ID keeps each wake-up distinct: see PostgresChannel). */
  | { readonly type: 'queued'; readonly taskId: string }
  | {
      readonly type: 'changed';
      readonly taskId: string;
      readonly accountId: string;
      readonly finished: boolean;
    };

export interface TaskEvents {
  publish(event: TaskEvent): Promise<void>;
  subscribe(listener: (event: TaskEvent) => void): () => void;
  close(): Promise<void>;
}

/** Delivery within one process (the embedded database, or tests). */
export class LocalTaskEvents extends LocalEvents<TaskEvent> implements TaskEvents {
  async publish(event: TaskEvent): Promise<void> {
    this.deliver(event);
  }
}
