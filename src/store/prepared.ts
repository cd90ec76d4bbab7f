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
 * tenth of the CPU of an authenticated GraphQL request (docs/performance.md).
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
  nameStatement(compiled.sql);
  return async (q, ...values) => {
    const query: CompiledQuery<O> = { ...compiled, parameters: values, queryId: createQueryId() };
    return (await q.executeQuery(query)).rows;
  };
}

/**
 * Runs a statement whose SQL is the same on every call (its values change) as a named one,
 * like the queries of {@link prepared}: for the hot statements built with values in them (the
 * queue's submission, claim and finish). Its SQL must not vary without bound: each distinct
 * SQL is one more statement kept by every connection.
 */
export async function executeNamed<O>(q: Queryable, query: CompiledQuery<O>): Promise<O[]> {
  nameStatement(query.sql);
  return (await q.executeQuery(query)).rows;
}

/** The name of each statement that runs prepared, by its SQL. */
const statementNames = new Map<string, string>();

function nameStatement(sql: string): void {
  if (!statementNames.has(sql)) statementNames.set(sql, `atelier_${statementNames.size + 1}`);
}

/**
 * Makes a PostgreSQL client run the named statements as prepared statements: node-postgres
 * parses a named statement once per connection and then only binds and executes it, and
 * PostgreSQL may keep a generic plan. Parsing and planning the queue's statements was about a
 * quarter of PostgreSQL's CPU per job (docs/performance.md). Kysely passes SQL and values,
 * so the client's `query` is wrapped here to add the name.
 */
export function nameStatementsOn(client: pg.ClientBase): void {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const names = new StatementNames();
  client.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
    const name = typeof text === 'string' ? names.of(text) : undefined;
    if (name === undefined || !Array.isArray(values) || rest.length > 0)
      return query(text, values, ...rest);
    return query({ name, text, values }).catch((error: unknown) => {
      if (!names.replan(text as string, error)) throw error;
      return query({ name: names.of(text as string), text, values }).catch(inTransaction(error));
    });
  }) as typeof client.query;
}

/**
 * Runs the named statements on `connection` (PGlite's one connection) as PostgreSQL prepared
 * statements: each is `PREPARE`d on first use and then `EXECUTE`d, so PostgreSQL plans it
 * once, not on every call. Planning was most of the per-request reads' cost in PGlite — the
 * MCP token read took 614 µs as a query and 155 µs executed (docs/performance.md). PGlite's
 * query API has no named statements, and `EXECUTE` takes no bind parameters, so the values go
 * in as literals, quoted by node-postgres (text values only; any other runs as a query).
 * A prepared statement outlives a rolled-back transaction.
 */
export function prepareStatementsOn(connection: DatabaseConnection): void {
  const run = connection.executeQuery.bind(connection);
  const names = new StatementNames();
  const ready = new Set<string>();
  const execute = async <R>(query: CompiledQuery, name: string) => {
    if (!ready.has(name)) {
      await run(CompiledQuery.raw(`prepare ${name} as ${query.sql}`));
      ready.add(name);
    }
    const values = (query.parameters as string[]).map((value) => pg.escapeLiteral(value));
    const args = values.length === 0 ? '' : `(${values.join(', ')})`;
    return run<R>(CompiledQuery.raw(`execute ${name}${args}`));
  };
  connection.executeQuery = async <R>(query: CompiledQuery) => {
    const name = names.of(query.sql);
    if (name === undefined || !query.parameters.every((value) => typeof value === 'string'))
      return run<R>(query);
    try {
      return await execute<R>(query, name);
    } catch (error) {
      if (!names.replan(query.sql, error)) throw error;
      return execute<R>(query, names.of(query.sql)!).catch(inTransaction(error));
    }
  };
}

/**
 * The retry's error, unless it only says that the transaction had failed already (25P02):
 * then the first error, which says why.
 */
function inTransaction(first: unknown): (retry: unknown) => never {
  return (retry) => {
    throw (retry as { code?: unknown }).code === '25P02' ? first : retry;
  };
}

/**
 * One connection's names of the named statements. A migration that changes what a statement
 * returns (a column added under `RETURNING *`) makes its next run fail with 0A000 (a cached
 * plan must not change result type) before it does anything: the connection then prepares it
 * again under a new name and runs it once more — which answers outside a transaction, and
 * fails inside one as the transaction already has. The old statement stays until the
 * connection closes.
 */
class StatementNames {
  readonly #renamed = new Map<string, string>();
  #generation = 0;

  of(sql: string): string | undefined {
    return this.#renamed.get(sql) ?? statementNames.get(sql);
  }

  /** Whether `error` asks for `sql` to be planned again; if so, it has a new name from now. */
  replan(sql: string, error: unknown): boolean {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code !== '0A000' || message !== 'cached plan must not change result type') return false;
    this.#renamed.set(sql, `${statementNames.get(sql)}_${++this.#generation}`);
    return true;
  }
}
