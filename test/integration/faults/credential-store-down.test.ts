import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../../src/auth/api-key.ts';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrator.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { mcpAccessToken, postMcp } from '../../helpers/mcp.ts';
import { PrivatePostgres, withoutPrivatePostgres } from '../../helpers/private-postgres.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { wsClient } from '../../helpers/ws.ts';

// Spec §7: a credential check that cannot reach the database is 100102 (retryable), never a
// 100101 that would make a client throw a good key away, nor a 120001/190000; and no answer
// carries a driver message or a stack. Each backend's database is taken away under a running
// app: PostgreSQL is stopped for real (a private server), PGlite is closed.

const me = '{ __typename getUserByPrivateId { id } }';
const password = 'a database-down password';
/** What a driver or runtime error would leak. */
const internals =
  /ECONNREFUSED|connect |terminat|PGlite|closed|\bat .*\.ts:|stack|127\.0\.0\.1:\d/i;

interface Credentials {
  apiKey: string;
  /** A key that worked (and was cached) and has expired since. */
  expiredKey: string;
  idToken: string;
  mcpToken: string;
}

async function credentialsOf(t: TestApp, clock: TestClock): Promise<Credentials> {
  const seeded = await seedAccount(t.app);
  const expiring = await t.app.services.apiKeys.issue(seeded.account.id, {
    name: 'expiring',
    expiresAt: new Date(clock.now().getTime() + 1_000),
  });
  const used = await graphql(t.url, { query: me, apiKey: expiring.secret });
  assert.deepEqual(errorCodes(used), [], 'the expiring key worked, and is cached');
  // Expired, and still well within the cache's 10-second TTL.
  clock.advance(2_000);
  const email = `down-${seeded.account.id}@example.test`;
  await t.app.services.identityProvider!.addUser({ accountId: seeded.account.id, email, password });
  const signIn = await fetch(`${t.url}/idp/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const { idToken } = (await signIn.json()) as { idToken: string };
  const mcpToken = await mcpAccessToken(t, seeded.account.id);
  return { apiKey: seeded.apiKey, expiredKey: expiring.secret, idToken, mcpToken };
}

function whileDown(setup: {
  start(): Promise<Database>;
  takeAway(database: Database): Promise<void>;
  dispose(database: Database): Promise<void>;
}) {
  let database: Database;
  let t: TestApp;
  let credentials: Credentials;
  before(async () => {
    database = await setup.start();
    const clock = new TestClock();
    t = await startTestApp(database, { clock, env: { WORKER_CONCURRENCY: '0' } });
    credentials = await credentialsOf(t, clock);
    await setup.takeAway(database);
  });
  after(async () => {
    await t.close();
    await setup.dispose(database);
  });

  const refusedForNow = async (res: Awaited<ReturnType<typeof graphql>>, requestId: string) => {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(errorCodes(res), ['100102'], JSON.stringify(res.body));
    assert.equal(res.body.errors?.[0]?.extensions?.retryable, true);
    assert.equal(res.body.errors?.[0]?.extensions?.requestId, requestId);
    assert.doesNotMatch(JSON.stringify(res.body), internals);
    assertLoggedOnce();
  };

  /**
   * The internals are in the log: an expected outage is one warning line with the driver's
   * message, then a count (issue 30 §7), not a line with a stack trace per request.
   */
  const assertLoggedOnce = () => {
    const lines = t
      .logs()
      .split('\n')
      .filter((l) => l.includes('could not be checked'));
    assert.ok(lines.length >= 1 && lines.length <= 2, lines.join('\n'));
    assert.match(lines[0]!, /"level":40/);
    for (const line of lines) assert.doesNotMatch(line, /"stack"/);
  };

  it('an API key: 100102, retryable, no internals; the cause is logged', async () => {
    const res = await graphql(t.url, {
      query: me,
      apiKey: credentials.apiKey,
      headers: { 'x-request-id': 'down-api-key' },
    });
    await refusedForNow(res, 'down-api-key');
  });

  it('an expired key takes the unknown key’s path: a lookup (100102 now), not a cached expiry', async () => {
    const expired = await graphql(t.url, {
      query: me,
      apiKey: credentials.expiredKey,
      headers: { 'x-request-id': 'down-expired-key' },
    });
    await refusedForNow(expired, 'down-expired-key');
    const unknown = await graphql(t.url, {
      query: me,
      apiKey: generateApiKey().secret,
      headers: { 'x-request-id': 'down-unknown-key' },
    });
    await refusedForNow(unknown, 'down-unknown-key');
  });

  it('an X-IdP-Token: 100102, retryable, no internals; the cause is logged', async () => {
    const res = await graphql(t.url, {
      query: me,
      headers: { 'x-idp-token': credentials.idToken, 'x-request-id': 'down-id-token' },
    });
    await refusedForNow(res, 'down-id-token');
  });

  it('a WebSocket handshake: closed with 4500 naming 100102, not 4403', async () => {
    const ws = wsClient(t.url, { apiKey: credentials.apiKey });
    const closed = await ws.closed;
    await ws.client.dispose();
    assert.equal(closed.code, 4500);
    assert.match(closed.reason, /^100102: /);
    assert.doesNotMatch(closed.reason, internals);
    assertLoggedOnce();
  });

  it('a built-in sign-in, a code exchange and a browser session: 503, 100102, no internals', async () => {
    const attempts: Array<[string, Promise<Response>]> = [
      [
        'sign-in',
        fetch(`${t.url}/idp/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'down@example.test', password }),
        }),
      ],
      [
        'token',
        fetch(`${t.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            client_id: 'atelier-local-tools',
            code: 'a-code-that-cannot-be-looked-up',
            redirect_uri: 'http://localhost:45999/oauth/callback',
            code_verifier: 'v'.repeat(43),
            resource: `${t.url}/mcp`,
          }),
        }),
      ],
      [
        'session',
        fetch(`${t.url}/auth/session`, {
          headers: { cookie: `atelier_session=${'s'.repeat(43)}` },
        }),
      ],
    ];
    for (const [label, attempt] of attempts) {
      const res = await attempt;
      const text = await res.text();
      assert.equal(res.status, 503, `${label}: ${text}`);
      assert.equal(res.headers.get('retry-after'), '1', label);
      const { error } = JSON.parse(text) as { error: { code: string; retryable: boolean } };
      assert.deepEqual([error.code, error.retryable], ['100102', true], label);
      assert.doesNotMatch(text, internals, label);
    }
  });

  it('an MCP bearer token: 503 temporarily_unavailable, 100102, no internals', async () => {
    const res = await postMcp(t.url, {
      authorization: `Bearer ${credentials.mcpToken}`,
      'x-request-id': 'down-mcp',
    });
    const text = await res.text();
    assert.equal(res.status, 503, text);
    assert.equal(res.headers.get('retry-after'), '1');
    const body = JSON.parse(text) as Record<string, unknown>;
    assert.equal(body.error, 'temporarily_unavailable');
    assert.equal(body.code, '100102');
    assert.equal(body.retryable, true);
    assert.equal(body.request_id, 'down-mcp');
    assert.doesNotMatch(text, internals);
    assert.ok(t.logs().includes('"reqId":"down-mcp"'));
  });
}

describe('credentials checked while PostgreSQL is stopped [private server]', {
  skip: withoutPrivatePostgres,
}, () => {
  let server: PrivatePostgres;
  whileDown({
    start: async () => {
      server = await PrivatePostgres.create();
      const database = await openDatabase({ backend: 'postgres', url: server.url, poolSize: 4 });
      await migrateToLatest(database.db);
      return database;
    },
    takeAway: () => server.stop(),
    dispose: async (database) => {
      await database.close();
      await server.destroy();
    },
  });
});

describe('credentials checked while PGlite is closed', () => {
  let database: Database;
  whileDown({
    start: async () => {
      database = await openDatabase({ backend: 'pglite', dataDir: null });
      await migrateToLatest(database.db);
      return database;
    },
    takeAway: (db) => db.close(),
    dispose: async () => {},
  });
});
