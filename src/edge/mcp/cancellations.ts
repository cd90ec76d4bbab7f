import { createHash } from 'node:crypto';

/** What carries a cancellation to every node (events/broadcast.ts, built by the core). */
export interface CancellationBus {
  publish(message: string): Promise<void>;
  subscribe(listener: (message: string) => void): () => void;
}

/** A JSON-RPC request's id, as a client gives it. */
export type RequestId = string | number;

/**
 * MCP requests in flight on this node, and the cancellations that stop them. Stateless: a
 * client's `notifications/cancelled` is a POST of its own, which any node may answer, while the
 * request it names runs as another POST, perhaps on another node. So a cancellation is
 * broadcast to every node, and the one holding the request stops it. A request is known by the
 * token it came with (its jti) and its id, so one client cannot cancel another's.
 */
export class McpCancellations {
  readonly #bus: CancellationBus;
  readonly #running = new Map<string, () => void>();

  constructor(bus: CancellationBus) {
    this.#bus = bus;
    bus.subscribe((key) => this.#running.get(key)?.());
  }

  /** Keeps `stop` for the request until the returned function is called. */
  track(jti: string, id: RequestId, stop: () => void): () => void {
    const key = keyOf(jti, id);
    this.#running.set(key, stop);
    return () => {
      if (this.#running.get(key) === stop) this.#running.delete(key);
    };
  }

  /** Stops the request wherever it runs; a request already answered is nothing to stop. */
  cancel(jti: string, id: RequestId): Promise<void> {
    return this.#bus.publish(keyOf(jti, id));
  }
}

/** Opaque on the channel: the token's id does not travel in clear through the database. */
function keyOf(jti: string, id: RequestId): string {
  return createHash('sha256')
    .update(`${jti}\n${JSON.stringify(id)}`)
    .digest('base64url');
}
