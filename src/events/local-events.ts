import { EventEmitter } from 'node:events';

/**
 * Events delivered to the subscribers of this process: the local half of every event channel
 * (the whole of it on the embedded database, which admits no other process).
 */
export class LocalEvents<T> {
  readonly #emitter = new EventEmitter();

  constructor() {
    this.#emitter.setMaxListeners(0);
  }

  /** Hands an event to every subscriber of this process, synchronously. */
  deliver(event: T): void {
    this.#emitter.emit('event', event);
  }

  subscribe(listener: (event: T) => void): () => void {
    this.#emitter.on('event', listener);
    return () => this.#emitter.off('event', listener);
  }

  async close(): Promise<void> {
    this.#emitter.removeAllListeners();
  }
}
