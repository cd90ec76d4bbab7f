/**
 * How a stand-in's scripted run moves from one step to the next: at once (`auto`), or only
 * when the test calls `advance` (`manual`), so a test can hold a run at any step — running,
 * mid-progress, about to finish — and cancel it there. A manual run that is never advanced
 * hangs until it is cancelled, as a stuck job on a real server does.
 */
export class Pace {
  /** The labels of the steps passed so far, in order. */
  readonly passed: string[] = [];
  #manual: boolean;
  #credit = 0;
  #at: string | undefined;
  #wake: (() => void) | undefined;
  #watchers = new Set<() => void>();

  constructor(manual: boolean) {
    this.#manual = manual;
  }

  /** The step the run is waiting at, if it is waiting. */
  get at(): string | undefined {
    return this.#at;
  }

  /**
   * Called by the run before each step; resolves when the step may proceed and rejects with
   * the signal's reason once the run is cancelled.
   */
  async step(label: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (!this.#manual || this.#credit > 0) {
      if (this.#manual) this.#credit -= 1;
      // Yield, so a run never completes inside the request that started it.
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal.throwIfAborted();
      this.passed.push(label);
      return;
    }
    this.#at = label;
    for (const watcher of [...this.#watchers]) watcher();
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        this.#wake = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
      });
    } finally {
      this.#at = undefined;
      this.#wake = undefined;
    }
    if (this.#manual) this.#credit -= 1;
    this.passed.push(label);
  }

  /** Lets a manual run take `steps` more steps. */
  advance(steps = 1): void {
    this.#credit += steps;
    this.#wake?.();
  }

  /** Lets the run go on to the end without waiting. */
  release(): void {
    this.#manual = false;
    this.#wake?.();
  }

  /** Resolves once the run is waiting at the step `label` (or at any step, without a label). */
  waitingAt(label?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.#at === undefined || (label !== undefined && this.#at !== label)) return;
        clearTimeout(timer);
        this.#watchers.delete(check);
        resolve(this.#at);
      };
      const timer = setTimeout(() => {
        this.#watchers.delete(check);
        reject(new Error(`run never waited at ${label ?? 'a step'}; passed: ${this.passed}`));
      }, 10_000); // 10 seconds: a run that never gets there fails the test, listing its steps
      this.#watchers.add(check);
      check();
    });
  }
}
