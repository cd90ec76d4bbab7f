import { EventEmitter } from 'node:events';

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
export class LocalTaskEvents implements TaskEvents {
  readonly #emitter = new EventEmitter();

  constructor() {
    this.#emitter.setMaxListeners(0);
  }

  async publish(event: TaskEvent): Promise<void> {
    this.#emitter.emit('event', event);
  }

  /** Delivers an event that arrived from elsewhere (the PostgreSQL bridge). */
  deliver(event: TaskEvent): void {
    this.#emitter.emit('event', event);
  }

  subscribe(listener: (event: TaskEvent) => void): () => void {
    this.#emitter.on('event', listener);
    return () => this.#emitter.off('event', listener);
  }

  async close(): Promise<void> {
    this.#emitter.removeAllListeners();
  }
}
