import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { countContents, testModels } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { PrivateRedis, testKeyPrefix, withoutPrivateRedis } from '../../helpers/redis.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

const image = (i: number) =>
  `g${i}: generateImage(input: { modelId: "mdl_test-fast", prompt: "kite ${i}", idempotencyKey: "k${i}" }) { contentId }`;
/** One mutation with `n` aliased `generateImage` fields. */
const aliases = (n: number) =>
  `mutation { ${Array.from({ length: n }, (_, i) => image(i)).join('\n')} }`;

async function balanceOf(database: Database, accountId: string) {
  const row = await database.db
    .selectFrom('credit_balances')
    .select('amount')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.amount);
}

describeEachBackend('rate limits count work, not requests', (backend) => {
  for (const store of ['memory', 'database'] as const) {
    describe(`counted in ${store}`, () => {
      let database: Database;
      let t: TestApp;
      withTestApp(
        backend,
        {
          env: {
            MODELS: testModels,
            WORKER_CONCURRENCY: '0',
            RATE_LIMIT_PER_WINDOW: '10',
            RATE_LIMIT_STORE: store,
          },
        },
        (started) => {
          ({ database, t } = started);
        },
      );

      it('15 aliases of generateImage against a limit of 10: refused whole (429, 150029), nothing submitted or charged', async () => {
        const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
        const res = await graphql(t.url, { query: aliases(15), apiKey });
        assert.equal(res.status, 429);
        const error = res.body.errors![0]!.extensions!;
        assert.equal(error.code, '150029');
        assert.equal(error.retryAfterSeconds, Number(res.headers.get('retry-after')));
        assert.equal(res.body.data, undefined);
        assert.equal(await countContents(database, account.id), 0);
        assert.equal(await balanceOf(database, account.id), 100);
      });

      it('each generate* field in the executed operation is one hit, through fragments and across kinds', async () => {
        const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
        const res = await graphql(t.url, {
          operationName: 'Submit',
          query: `mutation Submit { ${image(1)} ${image(2)} ...More }
            fragment More on Mutation {
              ... on Mutation { ${image(3)} }
              speech: generateSpeech(input: { modelId: "mdl_atelier-voice", voiceModelId: "none", text: "hi" }) { contentId }
            }
            mutation NotRun { ${image(4)} ${image(5)} ${image(6)} ${image(7)} }`,
          apiKey,
        });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('ratelimit-remaining'), '6', '4 submissions of 10');
        assert.equal(await countContents(database, account.id), 3);
        // A request without submissions is one hit; a query naming "generate" is not a submission.
        const query = await graphql(t.url, {
          query: '{ generate: getUserByPrivateId { alias } }',
          apiKey,
        });
        assert.equal(query.headers.get('ratelimit-remaining'), '5');
        // What is left of the window takes a document that fits, and no more.
        assert.equal(
          (await graphql(t.url, { query: aliases(5), apiKey })).headers.get('ratelimit-remaining'),
          '0',
        );
        assert.equal((await graphql(t.url, { query: aliases(1), apiKey })).status, 429);
      });
    });
  }
});

it('counted in Redis: a document weighs its submissions there too', {
  skip: withoutPrivateRedis,
}, async (ctx) => {
  const redis = await PrivateRedis.create();
  ctx.after(() => redis.kill());
  const database = await createTestDatabase('pglite');
  ctx.after(() => database.close());
  const t = await startTestApp(database, {
    env: {
      MODELS: testModels,
      WORKER_CONCURRENCY: '0',
      RATE_LIMIT_PER_WINDOW: '10',
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: testKeyPrefix(),
    },
  });
  ctx.after(() => t.close());
  const { apiKey, account } = await seedAccount(t.app);
  const four = await graphql(t.url, { query: aliases(4), apiKey });
  assert.equal(four.headers.get('ratelimit-remaining'), '6');
  const refused = await graphql(t.url, { query: aliases(7), apiKey });
  assert.equal(refused.status, 429);
  assert.equal(await countContents(database, account.id), 4);
});

describe('WebSocket operations count against the account window', () => {
  const clock = new TestClock();
  let database: Database;
  let t: TestApp;
  withTestApp(
    'pglite',
    {
      clock,
      // Behind one proxy hop, so anonymous callers are told apart by X-Forwarded-For.
      env: {
        MODELS: testModels,
        WORKER_CONCURRENCY: '0',
        RATE_LIMIT_PER_WINDOW: '10',
        TRUST_PROXY: '1',
      },
    },
    (started) => {
      ({ database, t } = started);
    },
  );

  const once = async (client: ReturnType<typeof wsClient>['client'], query: string) => {
    const run = collect<Record<string, unknown>>(client, query);
    const outcome = await run.finished;
    const errors = (outcome.error as Array<{ extensions?: Record<string, unknown> }>) ?? [];
    return { results: run.results, errors };
  };

  it('queries and mutations on one socket are refused (150029, retryAfterSeconds) past the limit; the socket stays usable', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    const ws = wsClient(t.url, { apiKey });
    try {
      for (let i = 0; i < 9; i++) {
        const { results, errors } = await once(ws.client, '{ getUserByPrivateId { alias } }');
        assert.deepEqual(errors, [], `operation ${i + 1}`);
        assert.equal(results[0]?.errors, undefined);
      }
      const mutation = await once(ws.client, aliases(1));
      assert.equal(mutation.results[0]?.errors, undefined, 'the tenth operation runs');
      const refused = await once(ws.client, aliases(1));
      assert.equal(refused.errors[0]?.extensions?.code, '150029');
      const wait = refused.errors[0]?.extensions?.retryAfterSeconds as number;
      assert.ok(wait >= 1 && wait <= 60, `retryAfterSeconds ${wait}`);
      assert.equal(
        await countContents(database, account.id),
        1,
        'the refused one submitted nothing',
      );
      // The same window as HTTP.
      const http = await graphql(t.url, { query: '{ getUserByPrivateId { alias } }', apiKey });
      assert.equal(http.status, 429);

      clock.advance(wait * 1000);
      const next = await once(ws.client, '{ getUserByPrivateId { alias } }');
      assert.deepEqual(next.errors, [], 'a new window, on the same socket');
    } finally {
      await ws.client.dispose();
    }
  });

  it('15 aliases over the socket against a limit of 10 submit nothing; a subscription counts once when started', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 100 } });
    const ws = wsClient(t.url, { apiKey });
    try {
      const refused = await once(ws.client, aliases(15));
      assert.equal(refused.errors[0]?.extensions?.code, '150029');
      assert.equal(await countContents(database, account.id), 0);
      assert.equal(await balanceOf(database, account.id), 100);

      clock.advance(60_000);
      const subscription = collect(ws.client, 'subscription { myTaskUpdates { taskId } }');
      const submitted = await once(ws.client, aliases(9)); // 1 + 9 = the whole window
      assert.deepEqual(submitted.errors, []);
      assert.equal(submitted.results[0]?.errors, undefined);
      const over = await once(ws.client, '{ __typename }');
      assert.equal(over.errors[0]?.extensions?.code, '150029');
      subscription.unsubscribe();
    } finally {
      await ws.client.dispose();
    }
  });

  it('anonymous callers behind a proxy each use up their own window, shared with their HTTP', async () => {
    const codesOf = async (address: string, operations: number) => {
      const ws = wsClient(t.url, { headers: { 'x-forwarded-for': address } });
      try {
        const codes: unknown[] = [];
        for (let i = 0; i < operations; i++) {
          const outcome = await collect(ws.client, '{ __typename }').finished;
          const errors = (outcome.error as Array<{ extensions?: { code?: unknown } }>) ?? [];
          codes.push(errors[0]?.extensions?.code ?? 'ok');
        }
        return codes;
      } finally {
        await ws.client.dispose();
      }
    };
    const limited = [...Array(10).fill('ok'), '150029'];
    assert.deepEqual(await codesOf('198.51.100.10', 11), limited);
    assert.deepEqual(await codesOf('198.51.100.11', 10), Array(10).fill('ok'));
    const http = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.10' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    assert.equal(http.status, 429);
  });
});
