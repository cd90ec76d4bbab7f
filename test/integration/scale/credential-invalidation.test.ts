import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrator.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase, createTestDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { postMcp } from '../../helpers/mcp.ts';
import {
  authorizeInBrowser,
  authorizeUrl,
  exchangeWithOauth4webapi,
  newPkce,
  TestBrowser,
} from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { SilencingRelay } from '../../helpers/silencing-relay.ts';

// Revoking a key and suspending or deleting an account take effect on the very next request on
// every node, although each node caches valid keys: two `bin/atelier serve` processes on one
// PostgreSQL, and the command line changing an account while they run.

const me = '{ getUserByPrivateId { id } }';

describe('credential changes reach every API process [postgres: two api processes]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  const processes: RunningServer[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-creds-'));
  let drop: () => Promise<void>;
  let env: Record<string, string>;
  let api1: RunningServer;
  let api2: RunningServer;
  before(async () => {
    const database = await createEmptyPostgresDatabase();
    drop = database.drop;
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir, WORKER_CONCURRENCY: '0' };
    assert.equal((await atelier(['migrate'], env)).code, 0);
    api1 = await startServer(env);
    processes.push(api1);
    // One public URL, as behind a load balancer: MCP tokens name it as issuer and audience.
    api2 = await startServer({ ...env, PUBLIC_URL: api1.url });
    processes.push(api2);
  });
  after(async () => {
    for (const p of processes) await p.stop();
    await drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cli = async (args: string[]) => {
    const result = await atelier(args, env);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const newAccount = async (alias: string) =>
    (await cli(['account', 'create', '--alias', alias, '--api-key-access'])).id as string;
  const newKey = async (accountId: string) => {
    const created = (await cli(['apikey', 'create', '--account', accountId])) as {
      apiKey: { id: string };
      secret: string;
    };
    return { id: created.apiKey.id, secret: created.secret };
  };
  /** Both processes answer for the key (and now hold it in their caches). */
  const warm = async (secret: string) => {
    for (const api of [api1, api2]) {
      const res = await graphql(api.url, { query: me, apiKey: secret });
      assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body));
    }
  };

  it('a key revoked through one process is refused on the next request through the other', async () => {
    const account = await newAccount('revoker');
    const doomed = await newKey(account);
    const other = await newKey(account);
    await warm(doomed.secret);
    await warm(other.secret);
    const revoked = await graphql(api1.url, {
      query: 'mutation R($id: ID!) { revokeApiKey(apiKeyId: $id) { id revokedAt } }',
      variables: { id: doomed.id },
      apiKey: other.secret,
    });
    assert.deepEqual(errorCodes(revoked), []);
    for (const api of [api2, api1]) {
      const res = await graphql(api.url, { query: me, apiKey: doomed.secret });
      assert.equal(res.status, 401, `${api.url}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(errorCodes(res), ['100101']);
    }
    // The account's other key is untouched.
    for (const api of [api2, api1])
      assert.deepEqual(errorCodes(await graphql(api.url, { query: me, apiKey: other.secret })), []);
  });

  it('an MCP connection revoked through one process is refused on the next request through the other', async () => {
    const account = await newAccount('mcp-revoker');
    const key = await newKey(account);
    const email = `${account}@example.test`;
    const password = 'an mcp password';
    const added = await atelier(
      ['idp', 'user', 'add', '--account', account, '--email', email, '--password-stdin'],
      // Without the nodes' PUBLIC_URL: the data store's recorded issuer is the one they use.
      env,
      `${password}\n`,
    );
    assert.equal(added.code, 0, added.stderr);
    const clientId = 'atelier-local-tools';
    const redirectUri = 'http://localhost:45999/oauth/callback';
    const pkce = await newPkce();
    const callback = await authorizeInBrowser(
      new TestBrowser(api1.url),
      api1.url,
      authorizeUrl(api1.url, { clientId, redirectUri, pkce }),
      { email, password },
    );
    const { access_token: token } = await exchangeWithOauth4webapi(
      api1.url,
      clientId,
      redirectUri,
      callback,
      pkce,
    );
    const listTools = (api: RunningServer) =>
      postMcp(api.url, { authorization: `Bearer ${token}` });
    for (const api of [api1, api2]) assert.equal((await listTools(api)).status, 200, api.url);

    const revoked = await graphql(api1.url, {
      query: 'mutation R($id: ID!) { revokeMcpConnection(clientId: $id) { clientId } }',
      variables: { id: clientId },
      apiKey: key.secret,
    });
    assert.deepEqual(errorCodes(revoked), [], JSON.stringify(revoked.body));
    for (const api of [api2, api1]) {
      const res = await listTools(api);
      assert.equal(res.status, 401, api.url);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    }
  });

  it('a command-line suspension and deletion apply on the next request through both processes', async () => {
    const account = await newAccount('suspended-by-cli');
    const key = await newKey(account);
    await warm(key.secret);

    await cli(['account', 'update', '--account', account, '--status', 'suspended']);
    for (const api of [api1, api2]) {
      const res = await graphql(api.url, { query: me, apiKey: key.secret });
      assert.deepEqual(errorCodes(res), ['100101'], `${api.url}: ${JSON.stringify(res.body)}`);
    }

    await cli(['account', 'update', '--account', account, '--status', 'active']);
    await warm(key.secret);

    await cli(['account', 'update', '--account', account, '--status', 'deleted']);
    for (const api of [api1, api2]) {
      const res = await graphql(api.url, { query: me, apiKey: key.secret });
      assert.deepEqual(errorCodes(res), ['110206'], `${api.url}: ${JSON.stringify(res.body)}`);
    }
  });
});

describe('a node that cannot hear credential changes does not trust its cache [postgres]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase('postgres');
    // Time stands still: no cache entry ever ages out, so only the fallback can refuse.
    t = await startTestApp(database, { clock: new TestClock(), env: { WORKER_CONCURRENCY: '0' } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('a key revoked while its LISTEN connection is down is refused all the same', async () => {
    const { apiKey, apiKeyId } = await seedAccount(t.app);
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey })), [], 'cached');
    // Cut the node's listening session, as a network blip or a failover would.
    const { rows } = await sql<{ pid: number }>`
      SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity
      WHERE datname = current_database() AND query = 'LISTEN atelier_credential_changes'`.execute(
      database.db,
    );
    assert.equal(rows.length, 1);
    // Revoked with no notification at all, as by a node whose NOTIFY this one could not hear.
    await database.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', apiKeyId)
      .execute();
    // The node learns of the cut asynchronously; from then on it asks the database.
    const deadline = Date.now() + 5_000;
    for (;;) {
      const res = await graphql(t.url, { query: me, apiKey });
      if (res.status === 401) break;
      assert.ok(Date.now() < deadline, 'the revoked key was still served from the cache');
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
});

describe('a node whose LISTEN connection goes silent stops trusting its cache [postgres]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let empty: Awaited<ReturnType<typeof createEmptyPostgresDatabase>>;
  let relay: SilencingRelay;
  let database: Database;
  let t: TestApp;
  before(async () => {
    empty = await createEmptyPostgresDatabase();
    relay = await SilencingRelay.start(empty.url, 'atelier_credential_changes');
    database = await openDatabase({ backend: 'postgres', url: relay.url, poolSize: 4 });
    await migrateToLatest(database.db);
    t = await startTestApp(database, { clock: new TestClock(), env: { WORKER_CONCURRENCY: '0' } });
  });
  after(async () => {
    await t.close();
    await database.close();
    await relay.close();
    await empty.drop();
  });

  it('a key revoked while the listener hears nothing, without any error, is refused soon after', async () => {
    const { apiKey, apiKeyId } = await seedAccount(t.app);
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey })), [], 'cached');
    assert.equal(relay.silenceListeners(), 1);
    await database.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', apiKeyId)
      .execute();
    // The heartbeat (every 5 s, 5 s to answer) finds the silence; TCP alone would take minutes.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await graphql(t.url, { query: me, apiKey });
      if (res.status === 401) break;
      assert.ok(Date.now() < deadline, 'the revoked key was still served from the cache');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});
