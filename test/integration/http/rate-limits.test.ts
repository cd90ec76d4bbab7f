import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { countContents, generateImage, testModels } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { freePort } from '../../helpers/net.ts';
import {
  PrivateRedis,
  sharedRedisUrl,
  testKeyPrefix,
  withoutPrivateRedis,
} from '../../helpers/redis.ts';
import { seedAccount } from '../../helpers/seed.ts';

const profile = '{ getUserByPrivateId { alias } }';

function assertRefused(
  res: { status: number; headers: Headers },
  body: unknown,
  shape: 'graphql' | 'http' | 'mcp',
) {
  assert.equal(res.status, 429);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal(res.headers.get('ratelimit-remaining'), '0');
  if (shape === 'mcp') {
    // Before MCP begins, /mcp answers as OAuth does, every name snake_case (issue 18).
    const error = body as Record<string, unknown>;
    assert.equal(error.error, 'rate_limited');
    assert.equal(error.code, '150029');
    assert.equal(error.retry_after_seconds, retryAfter);
    assert.equal(typeof error.request_id, 'string');
    assert.deepEqual(
      Object.keys(error).filter((key) => /[A-Z]/.test(key)),
      [],
    );
    return;
  }
  const error =
    shape === 'graphql'
      ? (body as { errors: Array<{ extensions: Record<string, unknown> }> }).errors[0]!.extensions
      : (body as { error: Record<string, unknown> }).error;
  assert.equal(error.code, '150029');
  assert.equal(error.retryAfterSeconds, retryAfter);
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describeEachBackend('rate limits on one node', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(
    backend,
    {
      env: {
        MODELS: testModels,
        WORKER_CONCURRENCY: '0',
        RATE_LIMIT_PER_WINDOW: '3',
        RATE_LIMIT_AUTH_PER_WINDOW: '2',
      },
    },
    (started) => {
      ({ database, t } = started);
    },
  );

  it('/graphql counts per account: the fourth request is 150029 and runs nothing; other accounts carry on', async () => {
    const a = await seedAccount(t.app, { credits: { standard: 10 } });
    const b = await seedAccount(t.app);
    for (const remaining of ['2', '1', '0']) {
      const res = await graphql(t.url, { query: profile, apiKey: a.apiKey });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit-limit'), '3');
      assert.equal(res.headers.get('ratelimit-remaining'), remaining);
    }
    const refused = await generateImage(t.url, a.apiKey, { modelId: 'mdl_test-fast', prompt: 'x' });
    assertRefused(refused, refused.body, 'graphql');
    assert.equal(refused.body.data, undefined);
    assert.equal((await graphql(t.url, { query: profile, apiKey: b.apiKey })).status, 200);
    // Nothing was charged or queued by the refused mutation.
    const balance = await database.db
      .selectFrom('credit_balances')
      .select('amount')
      .where('account_id', '=', a.account.id)
      .executeTakeFirstOrThrow();
    assert.equal(balance.amount, 10);
    assert.equal(await countContents(database, a.account.id), 0);
  });

  it('/graphql counts anonymous callers per IP, apart from accounts', async () => {
    for (let i = 0; i < 3; i++)
      assert.equal((await post(`${t.url}/graphql`, { query: '{ __typename }' })).status, 200);
    const res = await post(`${t.url}/graphql`, { query: '{ __typename }' });
    assertRefused(res, await res.json(), 'graphql');
  });

  it('/mcp counts per bearer token', async () => {
    const mcp = (token: string) =>
      post(
        `${t.url}/mcp`,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' },
      );
    for (let i = 0; i < 3; i++) assert.equal((await mcp('token-one')).status, 401);
    const res = await mcp('token-one');
    assertRefused(res, await res.json(), 'mcp');
    assert.equal((await mcp('token-two')).status, 401, 'another token is counted apart');
  });

  it('/oauth/token, /auth/session and /idp/sign-in count per IP, each apart', async () => {
    const attempts = {
      token: () =>
        fetch(`${t.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code&code=nope',
        }),
      session: () => post(`${t.url}/auth/session`, { id_token: 'nope' }),
      signIn: (i: number) =>
        post(`${t.url}/idp/sign-in`, {
          email: `nobody${i}@example.test`,
          password: 'wrong-password',
        }),
    };
    for (const [name, attempt] of Object.entries(attempts)) {
      for (let i = 0; i < 2; i++) {
        const res = await attempt(i);
        assert.notEqual(res.status, 429, `${name} attempt ${i + 1}`);
        // Sign-in also counts per email (10); the headers show the limit closer to refusing.
        assert.equal(res.headers.get('ratelimit-limit'), '2', name);
        assert.equal(res.headers.get('ratelimit-remaining'), String(1 - i), name);
      }
      const res = await attempt(2);
      assertRefused(res, await res.json(), 'http');
    }
  });
});

describeEachBackend('rate limits shared through the database', (backend) => {
  let database: Database;
  let first: TestApp;
  let second: TestApp;
  const env = {
    WORKER_CONCURRENCY: '0',
    RATE_LIMIT_PER_WINDOW: '3',
    RATE_LIMIT_WINDOW_SECONDS: '2',
    RATE_LIMIT_STORE: 'database',
  };
  withTestApp(backend, { env }, (started) => {
    ({ database, t: first } = started);
  });

  it('two nodes count the same hits, and a new window starts afresh', async (ctx) => {
    second = await startTestApp(database, { env });
    ctx.after(() => second.close());
    const { apiKey } = await seedAccount(first.app);
    const ask = (app: TestApp) => graphql(app.url, { query: profile, apiKey });
    assert.equal((await ask(first)).status, 200);
    assert.equal((await ask(second)).status, 200);
    const third = await ask(first);
    assert.equal(third.headers.get('ratelimit-remaining'), '0');
    const refused = await ask(second);
    assertRefused(refused, refused.body, 'graphql');

    await sleep(Number(refused.headers.get('retry-after')) * 1000 + 100);
    const again = await ask(second);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('ratelimit-remaining'), '2');
  });
});

// Redis counts the same for either database, so these run on the embedded one only.
describe('rate limits shared through Redis', () => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase('pglite');
  });
  after(() => database.close());

  const startNode = (redisUrl: string, keyPrefix: string) =>
    startTestApp(database, {
      env: {
        WORKER_CONCURRENCY: '0',
        RATE_LIMIT_PER_WINDOW: '3',
        RATE_LIMIT_WINDOW_SECONDS: '2',
        REDIS_URL: redisUrl,
        REDIS_KEY_PREFIX: keyPrefix,
      },
    });

  it('two nodes count the same hits in Redis, under the prefix, and a new window starts afresh', {
    skip: sharedRedisUrl === undefined && 'TEST_REDIS_URL is not set',
  }, async (ctx) => {
    const prefix = testKeyPrefix();
    const first = await startNode(sharedRedisUrl!, prefix);
    ctx.after(() => first.close());
    const second = await startNode(sharedRedisUrl!, prefix);
    ctx.after(() => second.close());
    const { apiKey, account } = await seedAccount(first.app);
    const ask = (app: TestApp) => graphql(app.url, { query: profile, apiKey });
    assert.equal((await ask(first)).status, 200);
    assert.equal((await ask(second)).status, 200);
    assert.equal((await ask(first)).headers.get('ratelimit-remaining'), '0');
    const refused = await ask(second);
    assertRefused(refused, refused.body, 'graphql');

    const redis = new Redis(sharedRedisUrl!);
    ctx.after(() => redis.disconnect());
    const keys = await redis.keys(`${prefix}*`);
    assert.deepEqual(keys, [`${prefix}ratelimit:graphql:${account.id}`]);
    assert.equal(await redis.get(keys[0]!), '4');
    const ttl = await redis.pttl(keys[0]!);
    assert.ok(ttl > 0 && ttl <= 2000, `the window's key expires with it (${ttl} ms)`);

    await sleep(Number(refused.headers.get('retry-after')) * 1000 + 100);
    const again = await ask(first);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('ratelimit-remaining'), '2');
  });

  it('while Redis is down requests are answered uncounted and promptly; counting resumes when it is back', {
    skip: withoutPrivateRedis,
  }, async (ctx) => {
    const redis = await PrivateRedis.create();
    ctx.after(() => redis.kill());
    const node = await startNode(redis.url, testKeyPrefix());
    ctx.after(() => node.close());
    const { apiKey } = await seedAccount(node.app);
    const ask = () => graphql(node.url, { query: profile, apiKey });
    assert.equal((await ask()).headers.get('ratelimit-remaining'), '2', 'counted in Redis');

    await redis.kill();
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await ask();
      assert.equal(res.status, 200, 'the limiter fails open');
      assert.equal(res.headers.get('ratelimit-remaining'), null, 'nothing was counted');
      assert.ok(performance.now() - started < 1500, 'no request waits for Redis');
    }
    const warned = node.logs().match(/Redis does not count; rate limits are not applied/g);
    assert.equal(warned?.length, 1, 'one line for the whole outage');

    await redis.start();
    const deadline = Date.now() + 10_000;
    let remaining: string | null = null;
    while (remaining === null && Date.now() < deadline) {
      await sleep(200);
      remaining = (await ask()).headers.get('ratelimit-remaining');
    }
    assert.equal(remaining, '2', 'a fresh Redis counts again from the first hit');
    assert.match(node.logs(), /Redis counts rate limits again/);
  });

  it('a Redis that answers but refuses to count (out of memory) fails open too, and says so once', {
    skip: withoutPrivateRedis,
  }, async (ctx) => {
    const redis = await PrivateRedis.create();
    ctx.after(() => redis.kill());
    const admin = new Redis(redis.url);
    ctx.after(() => admin.disconnect());
    const node = await startNode(redis.url, testKeyPrefix());
    ctx.after(() => node.close());
    const { apiKey } = await seedAccount(node.app);
    const ask = () => graphql(node.url, { query: profile, apiKey });

    await admin.config('SET', 'maxmemory', '1'); // every write is now refused
    for (let i = 0; i < 5; i++) {
      const res = await ask();
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit-remaining'), null);
    }
    const warned = node.logs().match(/Redis does not count; rate limits are not applied/g);
    assert.equal(warned?.length, 1);
    assert.match(node.logs(), /OOM/);

    await admin.config('SET', 'maxmemory', '0');
    assert.equal((await ask()).headers.get('ratelimit-remaining'), '2');
    assert.match(node.logs(), /Redis counts rate limits again/);
    await node.close();
    assert.equal(node.logs().match(/Redis does not count/g)?.length, 1, 'closing is not an outage');
  });

  it('a node whose Redis never answers starts anyway and serves', async (ctx) => {
    const started = performance.now();
    const node = await startNode(`redis://127.0.0.1:${await freePort()}`, testKeyPrefix());
    ctx.after(() => node.close());
    assert.ok(performance.now() - started < 5000, 'start-up waits for Redis only briefly');
    const { apiKey } = await seedAccount(node.app);
    for (let i = 0; i < 4; i++)
      assert.equal((await graphql(node.url, { query: profile, apiKey })).status, 200);
  });
});
