import { LocalEvents } from './local-events.ts';
import { PostgresChannel } from './postgres-channel.ts';

/**
 * A short message from any process to every process, this one included: for what must reach
 * whichever node holds a thing (an MCP request a client cancels through another node).
 * Delivery is at most once; a message sent while a node's listener is down does not reach it.
 */
export interface Broadcast {
  publish(message: string): Promise<void>;
  subscribe(listener: (message: string) => void): () => void;
  close(): Promise<void>;
}

/** Within one process: the embedded database admits no other. */
export class LocalBroadcast extends LocalEvents<string> implements Broadcast {
  async publish(message: string): Promise<void> {
    this.deliver(message);
  }
}

/** Across processes, through a PostgreSQL LISTEN/NOTIFY channel of its own. */
export class PostgresBroadcast implements Broadcast {
  readonly #local = new LocalBroadcast();
  #channel: PostgresChannel | undefined;

  private constructor() {}

  static async open(url: string, channel: string): Promise<PostgresBroadcast> {
    const broadcast = new PostgresBroadcast();
    broadcast.#channel = await PostgresChannel.open(url, channel, {
      message: (payload) => broadcast.#local.deliver(payload),
    });
    return broadcast;
  }

  /** Sent through the database; this process hears it back with the others. */
  async publish(message: string): Promise<void> {
    await this.#channel?.notify(message);
  }

  subscribe(listener: (message: string) => void): () => void {
    return this.#local.subscribe(listener);
  }

  async close(): Promise<void> {
    await this.#channel?.close();
    await this.#local.close();
  }
}
