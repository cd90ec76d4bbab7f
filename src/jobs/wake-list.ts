/**
 * Waits that end at their deadline or when woken, whichever comes first: the task runner's
 * slots asleep until work arrives, or pausing before they try a finish again.
 */
export class WakeList {
  readonly #waiting = new Set<() => void>();

  /** Waits in progress. */
  get size(): number {
    return this.#waiting.size;
  }

  /** Resolves after `ms`, or sooner when woken. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#waiting.add(wake);
    });
  }

  /** Ends the longest wait, if any. */
  wakeOne(): void {
    const [wake] = this.#waiting;
    wake?.();
  }

  wakeAll(): void {
    for (const wake of [...this.#waiting]) wake();
  }
}
