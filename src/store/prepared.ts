import {
  type Compilable,
  CompiledQuery,
  createQueryId,
  type DatabaseConnection,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import pg from 'pg';
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
  statementNames.set(compiled.sql, `atelier_prepared_${statementNames.size + 1}`);
  return async (q, ...values) => {
    const query: CompiledQuery<O> = { ...compiled, parameters: values, queryId: createQueryId() };
    return (await q.executeQuery(query)).rows;
  };
}

/** The statement name of each query made by {@link prepared}, by its SQL. */
const statementNames = new Map<string, string>();

/**
 * Runs the queries of {@link prepared} on `connection` (PGlite's one connection) as PostgreSQL
 * prepared statements: each is `PREPARE`d on first use and then `EXECUTE`d, so PostgreSQL
 * plans it once, not on every call. Planning was most of these reads' cost in PGlite — the MCP
 * token read took 614 µs as a query and 155 µs executed (README, "Performance"). PGlite's
 * query API has no named statements, and `EXECUTE` takes no bind parameters, so the values
 * go in as literals, quoted by node-postgres (text values only; any other runs as a query).
 *
 * A prepared statement outlives a rolled-back transaction. A migration that changes what one
 * returns makes its next call fail with 0A000 (a cached plan must not change result type);
 * the call after drops the statement and prepares it again.
 */
export function prepareStatementsOn(connection: DatabaseConnection): void {
  const run = connection.executeQuery.bind(connection);
  const ready = new Set<string>();
  /** Prepared for a result that changed since (0A000): dropped before it is prepared again. */
  const stale = new Set<string>();
  connection.executeQuery = async <R>(query: CompiledQuery) => {
    const name = statementNames.get(query.sql);
    if (name === undefined || !query.parameters.every((value) => typeof value === 'string'))
      return run<R>(query);
    if (!ready.has(name)) {
      if (stale.has(name)) {
        await run(CompiledQuery.raw(`deallocate ${name}`));
        stale.delete(name);
      }
      await run(CompiledQuery.raw(`prepare ${name} as ${query.sql}`));
      ready.add(name);
    }
    const values = (query.parameters as string[]).map((value) => pg.escapeLiteral(value));
    try {
      return await run<R>(CompiledQuery.raw(`execute ${name}(${values.join(', ')})`));
    } catch (error) {
      if ((error as { code?: unknown }).code === '0A000') {
        ready.delete(name);
        stale.add(name);
      }
      throw error;
    }
  };
}
