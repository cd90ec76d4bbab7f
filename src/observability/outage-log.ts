import type { Logger } from '../shared/logger.ts';

/** How long one summary line covers. */
const windowMs = 10_000; // 10 seconds

interface Window {
  readonly timer: NodeJS.Timeout;
  count: number;
}

/**
 * Expected faults — the database away, stalled or cut — logged for what they are: the first of
 * a kind as one warning line (the error's message and code, no stack), then, every ten seconds
 * while it goes on, one line with how many more there were. A database cut under load used to
 * write a stack trace per request: hundreds of them, hiding everything else.
 */
export class OutageLog {
  readonly #log: Logger;
  readonly #windows = new Map<string, Window>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** One occurrence of `what` (a fixed phrase, e.g. 'database unavailable'), caused by `error`. */
  report(what: string, error: unknown, fields: Readonly<Record<string, unknown>> = {}): void {
    const open = this.#windows.get(what);
    if (open !== undefined) {
      open.count += 1;
      return;
    }
    this.#log.warn({ ...fields, cause: summary(error) }, what);
    const timer = setTimeout(() => this.#close(what), windowMs);
    timer.unref();
    this.#windows.set(what, { timer, count: 0 });
  }

  #close(what: string): void {
    const window = this.#windows.get(what);
    this.#windows.delete(what);
    if (window !== undefined && window.count > 0) {
      this.#log.warn(
        { repeated: window.count, seconds: windowMs / 1000 },
        `${what}: ${window.count} more in the last ${windowMs / 1000} s`,
      );
    }
  }

  /** Writes what is counted and stops the timers. */
  close(): void {
    for (const [what, window] of [...this.#windows]) {
      clearTimeout(window.timer);
      this.#close(what);
    }
  }
}

/** An error as one line: its message and code, without a stack. */
function summary(error: unknown): { message: string; code?: string } {
  const e = (error ?? {}) as { message?: unknown; code?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  return typeof e.code === 'string' ? { message, code: e.code } : { message };
}
