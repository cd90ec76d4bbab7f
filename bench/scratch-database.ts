import pg from 'pg';

/** The PostgreSQL server benchmarks may use: BENCH_DATABASE_URL, else TEST_DATABASE_URL. */
export const benchPostgres: string | undefined =
  process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;

/**
 * Runs `fn` with the URL of a fresh, empty database on `server`, dropped afterwards whatever
 * happens, so every measurement starts from the same state.
 */
export async function withScratchDatabase<T>(
  server: string,
  fn: (url: string) => Promise<T>,
): Promise<T> {
  const name = `atelier_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    try {
      return await fn(url.toString());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}
