import { PostgresChannel } from './postgres-channel.ts';
import { LocalTaskEvents, type TaskEvent, type TaskEvents } from './task-events.ts';

const channel = 'atelier_task_events';

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
    events.#channel = await PostgresChannel.open(url, channel, {
      message: (payload) => events.#local.deliver(JSON.parse(payload) as TaskEvent),
    });
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
