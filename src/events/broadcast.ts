import { LocalEvents } from './local-events.ts';
import { PostgresChannel } from './postgres-channel.ts';

/**
 * Short messages from any process to every process, this one included, by topic: for what
 * must reach whichever node holds a thing (an MCP request a client cancels through another
 * node) or every node's view of shared state (a backend taken out of rotation). Delivery is at
 * most once; a message sent while a node's listener is down does not reach it.
 */
export interface Broadcast {
  publish(topic: string, message: string): Promise<void>;
  subscribe(topic: string, listener: (message: string) => void): () => void;
  close(): Promise<void>;
}

/** The messages of one topic, as a bus of its own. */
export interface Topic {
  publish(message: string): Promise<void>;
  subscribe(listener: (message: string) => void): () => void;
}

export function topicOf(broadcast: Broadcast, topic: string): Topic {
  return {
    publish: (message) => broadcast.publish(topic, message),
    subscribe: (listener) => broadcast.subscribe(topic, listener),
  };
}

interface Message {
  readonly topic: string;
  readonly message: string;
}

/** Within one process: the embedded database admits no other. */
export class LocalBroadcast implements Broadcast {
  readonly #events = new LocalEvents<Message>();

  async publish(topic: string, message: string): Promise<void> {
    this.#events.deliver({ topic, message });
  }

  /** Delivers a message that arrived from elsewhere (the PostgreSQL channel). */
  deliver(message: Message): void {
    this.#events.deliver(message);
  }

  subscribe(topic: string, listener: (message: string) => void): () => void {
    return this.#events.subscribe((m) => {
      if (m.topic === topic) listener(m.message);
    });
  }

  close(): Promise<void> {
    return this.#events.close();
  }
}

/**
 * Across processes, through one PostgreSQL LISTEN/NOTIFY channel for every topic (one listening
 * connection per process): a payload is the topic, a newline, and the message.
 */
export class PostgresBroadcast implements Broadcast {
  readonly #local = new LocalBroadcast();
  #channel: PostgresChannel | undefined;

  private constructor() {}

  static async open(url: string, channel: string): Promise<PostgresBroadcast> {
    const broadcast = new PostgresBroadcast();
    broadcast.#channel = await PostgresChannel.open(url, channel, {
      message: (payload) => {
        const split = payload.indexOf('\n');
        if (split > 0) {
          broadcast.#local.deliver({
            topic: payload.slice(0, split),
            message: payload.slice(split + 1),
          });
        }
      },
    });
    return broadcast;
  }

  /** Sent through the database; this process hears it back with the others. */
  async publish(topic: string, message: string): Promise<void> {
    await this.#channel?.notify(`${topic}\n${message}`);
  }

  subscribe(topic: string, listener: (message: string) => void): () => void {
    return this.#local.subscribe(topic, listener);
  }

  async close(): Promise<void> {
    await this.#channel?.close();
    await this.#local.close();
  }
}
