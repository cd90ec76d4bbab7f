// Creates (or drops) the PostgreSQL database of one CI run. Usage:
//   node .ci/postgres.ts create   → prints its URL, or nothing when no server answers
//   node .ci/postgres.ts drop URL
import pg from 'pg';

const server = process.env.CI_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function withClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: server, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const [command, url] = process.argv.slice(2);
if (command === 'create') {
  const name = `atelier_ci_${process.pid}_${Date.now()}`;
  try {
    await withClient((client) => client.query(`CREATE DATABASE ${name}`));
    const target = new URL(server);
    target.pathname = `/${name}`;
    console.log(target.toString());
  } catch (error) {
    console.error(`No PostgreSQL at ${server} (${(error as Error).message}); PGlite only.`);
  }
} else if (command === 'drop' && url !== undefined) {
  const name = new URL(url).pathname.slice(1);
  await withClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
} else {
  console.error('usage: node .ci/postgres.ts create | drop URL');
  process.exitCode = 2;
}
