import pg from 'pg';
import { LocalTaskEvents, type TaskEvent, type TaskEvents } from './task-events.ts';

const channel = 'atelier_task_events';

/**
 * Task events across processes with PostgreSQL LISTEN/NOTIFY: every publish is a NOTIFY, and
 * each process (including the publisher) delivers what its listening connection receives, so
 * an API node's submission wakes a worker in another process, and a cancellation there aborts
 * the running engine at once. A lost listener connection is reopened; polling covers the gap.
 */
export class PostgresTaskEvents implements TaskEvents {
  readonly #url: string;
  readonly #local = new LocalTaskEvents();
  readonly #publisher: pg.Pool;
  #listener: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  private constructor(url: string) {
    this.#url = url;
    this.#publisher = new pg.Pool({ connectionString: url, max: 2 });
    this.#publisher.on('error', () => {});
  }

  static async connect(url: string): Promise<PostgresTaskEvents> {
    const events = new PostgresTaskEvents(url);
    await events.#listen();
    return events;
  }

  async publish(event: TaskEvent): Promise<void> {
    await this.#publisher.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify(event)]);
  }

  subscribe(listener: (event: TaskEvent) => void): () => void {
    return this.#local.subscribe(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#listener?.end().catch(() => {});
    await this.#publisher.end();
    await this.#local.close();
  }

  async #listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url });
    client.on('notification', (message) => {
      if (message.channel !== channel || message.payload === undefined) return;
      this.#local.deliver(JSON.parse(message.payload) as TaskEvent);
    });
    client.on('error', () => this.#reconnectSoon());
    client.on('end', () => this.#reconnectSoon());
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    this.#listener = client;
  }

  #reconnectSoon(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#listen().catch(() => this.#reconnectSoon());
    }, 1_000);
  }
}
