import {
  type Compilable,
  type CompiledQuery,
  createQueryId,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import type { Queryable } from './database.ts';
import type { Tables } from './schema.ts';

/** Builds and compiles queries without a connection: both backends speak PostgreSQL's SQL. */
const compiler = new Kysely<Tables>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/**
 * A query built and compiled once, then run with new parameter values. For the reads made on
 * every request: building Kysely's operation tree and compiling it anew each time was about a
 * tenth of the CPU of an authenticated GraphQL request (README, "Performance").
 *
 * `build` receives the placeholders in place of the values; they must become the compiled
 * query's parameters, all of them and in order (checked here, once), so a query whose builder
 * adds values of its own is refused at load rather than run with the wrong ones. Compiled
 * apart from the database it runs on, the query skips that database's plugins' query
 * transforms (result transforms still run); Atelier's databases have none.
 */
export function prepared<P extends readonly unknown[], O>(
  build: (db: Kysely<Tables>, ...placeholders: P) => Compilable<O>,
  ...placeholders: P
): (q: Queryable, ...values: P) => Promise<O[]> {
  const compiled = build(compiler, ...placeholders).compile();
  const same =
    compiled.parameters.length === placeholders.length &&
    compiled.parameters.every((value, i) => value === placeholders[i]);
  if (!same) {
    throw new Error(`A prepared query's parameters must be its placeholders: ${compiled.sql}`);
  }
  return async (q, ...values) => {
    const query: CompiledQuery<O> = { ...compiled, parameters: values, queryId: createQueryId() };
    return (await q.executeQuery(query)).rows;
  };
}
