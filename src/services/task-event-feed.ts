import type { TaskEvents } from '../events/task-events.ts';
import type { Db } from '../store/database.ts';
import {
  isAfter,
  type LoggedTaskEvent,
  type LogPosition,
  logHead,
  readLog,
} from '../store/task-event.store.ts';

export interface TaskEventFeedOptions {
  db: Db;
  /** Wake-ups: every task event published anywhere makes the feed read the log. */
  events: TaskEvents;
  /** How often the log is read without a wake-up (a lost notification only delays). */
  pollMs?: number;
  /** How soon to read again when an event waits for an older transaction to end. */
  retryMs?: number;
}

const pageSize = 500;

/**
 * This process's reader of the task event log, started by the first listener: one query per
 * wake-up, however many
 * subscriptions listen, each event handed to every listener in log order. It delivers an
 * event only once no older transaction can still commit one before it (`readLog`), so its
 * position only moves forward and a listener sees every event after the position it joined at.
 */
export class TaskEventFeed {
  readonly #o: Required<TaskEventFeedOptions>;
  readonly #listeners = new Set<(event: LoggedTaskEvent) => void>();
  #position: LogPosition | undefined;
  #starting: Promise<void> | undefined;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #unsubscribe: (() => void) | undefined;
  #poll: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: TaskEventFeedOptions) {
    this.#o = { pollMs: 1_000, retryMs: 25, ...options };
  }

  /**
   * Adds a listener of every event after the returned position (the feed's position when it
   * was added, in the same turn, so nothing falls between a replay up to it and the listener).
   */
  async listen(
    listener: (event: LoggedTaskEvent) => void,
  ): Promise<{ from: LogPosition; stop: () => void }> {
    this.#starting ??= this.#start();
    await this.#starting;
    this.#listeners.add(listener);
    return { from: this.#position!, stop: () => this.#listeners.delete(listener) };
  }

  async #start(): Promise<void> {
    this.#position = await logHead(this.#o.db);
    this.#unsubscribe = this.#o.events.subscribe(() => this.#wake());
    this.#poll = setInterval(() => this.#wake(), this.#o.pollMs);
    this.#poll.unref();
  }

  #wake(): void {
    // Read even with nobody listening, once started: the position stays current, so a
    // listener that joins later does not receive what happened before it.
    if (this.#closed) return;
    if (this.#reading !== undefined) {
      this.#readAgain = true;
      return;
    }
    this.#reading = this.#read()
      .catch(() => {
        // The database is away: the next wake-up or poll reads from the same position.
      })
      .finally(() => {
        this.#reading = undefined;
        if (this.#readAgain) {
          this.#readAgain = false;
          this.#wake();
        }
      });
  }

  async #read(): Promise<void> {
    for (;;) {
      const page = await readLog(this.#o.db, this.#position!, pageSize);
      for (const { event, deliverable } of page) {
        if (!deliverable) {
          // Committed behind a transaction still running: read again shortly.
          clearTimeout(this.#retry);
          this.#retry = setTimeout(() => this.#wake(), this.#o.retryMs);
          this.#retry.unref();
          return;
        }
        if (!isAfter(event.position, this.#position!)) continue;
        this.#position = event.position;
        for (const listener of this.#listeners) listener(event);
      }
      if (page.length < pageSize) return;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe?.();
    clearInterval(this.#poll);
    clearTimeout(this.#retry);
    this.#listeners.clear();
    await this.#reading;
  }
}
