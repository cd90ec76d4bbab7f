import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CredentialChange,
  type CredentialEvent,
  type CredentialEvents,
  LocalCredentialEvents,
} from './credential-events.ts';
import { PostgresChannel } from './postgres-channel.ts';

const channel = 'atelier_credential_changes';
/** How long a publisher waits to hear its own change back before it answers anyway. */
const echoWaitMs = 1_000; // 1 second

/**
 * Credential changes across processes with PostgreSQL LISTEN/NOTIFY. A publisher waits until
 * its own listener hears the change back: PostgreSQL hands a notification to every listening
 * session at once, so by then the other nodes have it on their sockets too, and a client that
 * revokes a key through one node and calls another right after is refused there.
 */
export class PostgresCredentialEvents implements CredentialEvents {
  readonly #local = new LocalCredentialEvents();
  readonly #echoes = new Map<string, () => void>();
  #channel: PostgresChannel | undefined;

  private constructor() {}

  static async connect(url: string): Promise<PostgresCredentialEvents> {
    const events = new PostgresCredentialEvents();
    events.#channel = await PostgresChannel.open(url, channel, {
      message: (payload) => events.#receive(payload),
      liveness: (live) => events.#local.deliver({ type: 'delivery', live }),
    });
    return events;
  }

  get live(): boolean {
    return this.#channel?.live ?? false;
  }

  /**
   * Never rejects: the change has committed, and its caller must not hear of a failure for a
   * revocation that happened. If the NOTIFY cannot be sent (the database is away), this node
   * still forgets the credential at once, and the others stop trusting their caches for as long
   * as their own LISTEN connections are down too; at worst an entry ages out (10 s).
   */
  async publish(change: CredentialChange): Promise<void> {
    const echo = randomUUID();
    const abort = new AbortController();
    const heard = new Promise<void>((resolve) => this.#echoes.set(echo, resolve));
    try {
      const sent = await this.#channel?.notify(JSON.stringify({ ...change, echo })).then(
        () => true,
        () => false,
      );
      if (sent === false) {
        this.#local.deliver(change);
        return;
      }
      // Not listening: nothing to wait for, and the caches here are off until it is back.
      if (!this.live) return;
      const timeout = sleep(echoWaitMs, undefined, { signal: abort.signal }).catch(() => {});
      await Promise.race([heard, timeout]);
    } finally {
      abort.abort();
      this.#echoes.delete(echo);
    }
  }

  subscribe(listener: (event: CredentialEvent) => void): () => void {
    return this.#local.subscribe(listener);
  }

  async close(): Promise<void> {
    await this.#channel?.close();
    await this.#local.close();
  }

  #receive(payload: string): void {
    const { echo, ...change } = JSON.parse(payload) as CredentialChange & { echo?: string };
    this.#local.deliver(change);
    if (echo !== undefined) this.#echoes.get(echo)?.();
  }
}
