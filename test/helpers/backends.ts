import { describe } from 'node:test';
import type { Backend } from '../../src/store/database.ts';

/** PostgreSQL joins PGlite when `TEST_DATABASE_URL` names a server (CI sets it). */
export const postgresUrl = process.env.TEST_DATABASE_URL || undefined;

export const testBackends: readonly Backend[] =
  postgresUrl === undefined ? ['pglite'] : ['pglite', 'postgres'];

/** Declares the same suite once per available backend: `name [pglite]`, `name [postgres]`. */
export function describeEachBackend(name: string, suite: (backend: Backend) => void): void {
  for (const backend of testBackends) describe(`${name} [${backend}]`, () => suite(backend));
}
