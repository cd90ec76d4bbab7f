import { setTimeout as delay } from 'node:timers/promises';
import { PostgresChannel } from './postgres-channel.ts';
import { LocalTaskEvents, type TaskEvent, type TaskEvents } from './task-events.ts';

const channel = 'atelier_task_events';

/**
 * How long task events that come in a burst wait for more to join them in one NOTIFY statement.
 * A busy queue publishes three events a job; waiting this long let one statement carry about
 * twenty where it carried three (docs/performance-runtime.md). Under load, events delivered
 * through the LISTEN connection (wake-ups, cancellations, live updates) come up to this much
 * later; a lone event is not held.
 */
const gatherMs = 10; // 10 ms

/**
 * Task events across processes with PostgreSQL LISTEN/NOTIFY: every publish is a NOTIFY, and
 * each process (including the publisher) delivers what its listening connection receives, so
 * an API node's submission wakes a worker in another process, and a cancellation there aborts
 * the running engine at once. A lost listener connection is reopened; polling covers the gap.
 */
export class PostgresTaskEvents implements TaskEvents {
  readonly #local = new LocalTaskEvents();
  #channel: PostgresChannel | undefined;

  private constructor() {}

  static async connect(url: string): Promise<PostgresTaskEvents> {
    const events = new PostgresTaskEvents();
    events.#channel = await PostgresChannel.open(
      url,
      channel,
      { message: (payload) => events.#local.deliver(JSON.parse(payload) as TaskEvent) },
      { gather: () => delay(gatherMs) },
    );
    return events;
  }

  async publish(event: TaskEvent): Promise<void> {
    await this.#channel?.notify(JSON.stringify(event));
  }

  subscribe(listener: (event: TaskEvent) => void): () => void {
    return this.#local.subscribe(listener);
  }

  async close(): Promise<void> {
    await this.#channel?.close();
    await this.#local.close();
  }
}
