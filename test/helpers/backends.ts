import { after, describe } from 'node:test';
import type { Backend } from '../../src/store/database.ts';

/** PostgreSQL joins PGlite when `TEST_DATABASE_URL` names a server (CI sets it). */
export const postgresUrl = process.env.TEST_DATABASE_URL || undefined;

export const testBackends: readonly Backend[] =
  postgresUrl === undefined ? ['pglite'] : ['pglite', 'postgres'];

/**
 * Declares the same suite once per available backend: `name [pglite]`, `name [postgres]`.
 * With both, the two run side by side (each its own database and app; a suite's own tests
 * still one at a time): much of a suite's time is spent waiting on its app, not computing.
 */
export function describeEachBackend(name: string, suite: (backend: Backend) => void): void {
  const each = () => {
    for (const backend of testBackends)
      describe(`${name} [${backend}]`, { concurrency: 1 }, () => suite(backend));
  };
  if (testBackends.length === 1) each();
  else describe(name, { concurrency: true }, each);
}

/**
 * One of what `start` makes per backend, closed after the file: for what the side-by-side
 * suites must not share, such as a stand-in that hands out its predictions in order.
 */
export async function perBackend<T extends { close(): unknown }>(
  start: () => Promise<T>,
): Promise<(backend: Backend) => T> {
  const made = new Map<Backend, T>();
  for (const backend of testBackends) made.set(backend, await start());
  after(() => Promise.all([...made.values()].map((one) => one.close())));
  return (backend) => made.get(backend)!;
}
