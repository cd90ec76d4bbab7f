import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** The lines a stream has written so far, and a way to wait for one. */
export interface Lines {
  readonly seen: readonly string[];
  /** The first line (written before or after the call) that matches `pattern`. */
  first(pattern: RegExp): Promise<string>;
}

/** Every line `stream` writes (a child's stdout or stderr): a signal to wait for, not a sleep. */
export function lines(stream: Readable): Lines {
  const seen: string[] = [];
  const waiting = new Set<() => void>();
  createInterface({ input: stream }).on('line', (line) => {
    seen.push(line);
    for (const wake of waiting) wake();
  });
  return {
    seen,
    first: (pattern) =>
      new Promise<string>((resolve) => {
        const look = () => {
          const found = seen.find((line) => pattern.test(line));
          if (found === undefined) return;
          waiting.delete(look);
          resolve(found);
        };
        waiting.add(look);
        look();
      }),
  };
}
