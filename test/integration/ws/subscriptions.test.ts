import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitOk, testModels } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

const taskUpdated =
  'subscription T($id: ID!) { taskUpdated(taskId: $id) { taskId status finishCode progress } }';
const myTaskUpdates = 'subscription { myTaskUpdates { taskId status finishCode } }';
type Task = { taskId: string; status: string; finishCode: number | null };

describeEachBackend('GraphQL over WebSocket (graphql-transport-ws, spec §5.3)', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ t } = started);
  });

  it('taskUpdated streams every status change up to finished with finishCode 0, then completes', async () => {
    const { apiKey } = await seedAccount(t.app);
    const ws = wsClient(t.url, { apiKey });
    try {
      const { taskId } = await submitOk(t.url, apiKey, {
        modelId: 'mdl_test-quick',
        prompt: 'live',
      });
      const sub = collect<{ taskUpdated: Task }>(ws.client, taskUpdated, { id: taskId });
      assert.deepEqual(await sub.finished, {});
      const states = sub.results.map((r) => r.data!.taskUpdated.status);
      assert.equal(states.at(-1), 'finished');
      assert.ok(states.includes('running'), states.join());
      assert.equal(sub.results.at(-1)!.data!.taskUpdated.finishCode, FinishCode.Ok);
    } finally {
      await ws.client.dispose();
    }
  });

  it('queries and mutations work over the socket too', async () => {
    const { account, apiKey } = await seedAccount(t.app);
    const ws = wsClient(t.url, { apiKey });
    try {
      const sub = collect<{ getUserByPrivateId: { id: string } }>(
        ws.client,
        '{ getUserByPrivateId { id } }',
      );
      await sub.finished;
      assert.equal(sub.results[0]?.data?.getUserByPrivateId.id, account.id);
    } finally {
      await ws.client.dispose();
    }
  });

  it('a browser-style idpToken authenticates; myTaskUpdates shows only the account’s own tasks', async () => {
    const { account, apiKey } = await seedAccount(t.app);
    const other = await seedAccount(t.app);
    await t.app.services.identityProvider!.addUser({
      accountId: account.id,
      email: `ws-${account.id}@example.test`,
      password: 'a websocket password',
    });
    const signIn = await fetch(`${t.url}/idp/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `ws-${account.id}@example.test`,
        password: 'a websocket password',
      }),
    });
    const { idToken } = (await signIn.json()) as { idToken: string };
    const ws = wsClient(t.url, { idpToken: idToken });
    try {
      const sub = collect<{ myTaskUpdates: Task }>(ws.client, myTaskUpdates);
      await t.logged((e) => e.msg === 'operation started' && e.accountId === account.id);
      await submitOk(t.url, other.apiKey, { modelId: 'mdl_test-fast', prompt: 'not mine' });
      const mine = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'mine' });
      await sub.until((so) => so.some((r) => r.data?.myTaskUpdates.status === 'finished'));
      sub.unsubscribe();
      assert.ok(sub.results.length > 0);
      for (const r of sub.results) assert.equal(r.data?.myTaskUpdates.taskId, mine.taskId);
    } finally {
      await ws.client.dispose();
    }
  });

  it('subscriptions sharing one execution per update keep their own selection and tasks', async (test) => {
    const a = await seedAccount(t.app);
    const b = await seedAccount(t.app);
    const wsA = wsClient(t.url, { apiKey: a.apiKey });
    const wsB = wsClient(t.url, { apiKey: b.apiKey });
    test.after(() => Promise.all([wsA.client.dispose(), wsB.client.dispose()]));
    type Seen = { myTaskUpdates: { taskId: string; status: string; cursor?: string } };
    const maybeCursor =
      'subscription W($c: Boolean!) { myTaskUpdates { taskId status cursor @include(if: $c) } }';
    const subs = {
      a1: collect<Seen>(wsA.client, myTaskUpdates),
      a2: collect<Seen>(wsA.client, myTaskUpdates),
      aCursor: collect<Seen>(wsA.client, maybeCursor, { c: true }),
      aNoCursor: collect<Seen>(wsA.client, maybeCursor, { c: false }),
      b: collect<Seen>(wsB.client, myTaskUpdates),
    };
    const started = new Set<unknown>();
    for (const [accountId, count] of [
      [a.account.id, 4],
      [b.account.id, 1],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const entry = await t.logged(
          (e) =>
            e.msg === 'operation started' && e.accountId === accountId && !started.has(e.reqId),
        );
        started.add(entry.reqId);
      }
    }
    const mine = await submitOk(t.url, a.apiKey, { modelId: 'mdl_test-fast', prompt: 'a' });
    const theirs = await submitOk(t.url, b.apiKey, { modelId: 'mdl_test-fast', prompt: 'b' });
    const done = (so: readonly { data?: Seen | null }[]) =>
      so.some((r) => r.data?.myTaskUpdates.status === 'finished');
    await Promise.all(Object.values(subs).map((sub) => sub.until(done)));
    const updates = (sub: { results: readonly { data?: Seen | null }[] }) =>
      sub.results.map((r) => r.data!.myTaskUpdates);
    assert.deepEqual(updates(subs.a1), updates(subs.a2));
    for (const u of updates(subs.a1)) assert.equal(u.taskId, mine.taskId);
    for (const u of updates(subs.b)) assert.equal(u.taskId, theirs.taskId);
    for (const u of updates(subs.aCursor)) assert.equal(typeof u.cursor, 'string');
    for (const u of updates(subs.aNoCursor)) assert.equal('cursor' in u, false);
    assert.deepEqual(
      updates(subs.aNoCursor).map((u) => u.status),
      updates(subs.aCursor).map((u) => u.status),
    );
  });

  it('an API key in idpToken is refused: the socket closes with 4403', async () => {
    const { apiKey } = await seedAccount(t.app);
    const ws = wsClient(t.url, { idpToken: apiKey });
    assert.equal((await ws.closed).code, 4403);
  });

  it('an invalid API key on the handshake is refused with 4403', async () => {
    const ws = wsClient(t.url, { apiKey: 'svc_notavalidkey' });
    assert.equal((await ws.closed).code, 4403);
  });

  it('another account’s task is refused (140004)', async () => {
    const owner = await seedAccount(t.app);
    const other = await seedAccount(t.app);
    const { taskId } = await submitOk(t.url, owner.apiKey, {
      modelId: 'mdl_test-slow',
      prompt: 'private',
    });
    const ws = wsClient(t.url, { apiKey: other.apiKey });
    try {
      const sub = collect<{ taskUpdated: Task }>(ws.client, taskUpdated, { id: taskId });
      await sub.finished;
      assert.equal(sub.results[0]?.errors?.[0]?.extensions?.code, '140004');
      assert.equal(sub.results[0]?.data ?? null, null, 'no data of that task');
    } finally {
      await ws.client.dispose();
    }
  });

  it('a key revoked mid-connection ends its running subscription within seconds', async () => {
    const { apiKey, apiKeyId } = await seedAccount(t.app);
    const ws = wsClient(t.url, { apiKey });
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_test-slow', prompt: 'long' });
    const sub = collect<{ taskUpdated: Task }>(ws.client, taskUpdated, { id: taskId });
    await sub.until((so) => so.length >= 1); // the subscription is running
    const revokedAt = Date.now();
    await graphql(t.url, {
      query: 'mutation R($id: ID!) { revokeApiKey(apiKeyId: $id) { id } }',
      variables: { id: apiKeyId },
      apiKey,
    });
    const closed = await ws.closed;
    assert.equal(closed.code, 4403);
    assert.ok(Date.now() - revokedAt < 6_500, `closed after ${Date.now() - revokedAt} ms`);
    await ws.client.dispose();
  });

  it('a revoked key cannot start the next operation on an open connection', async () => {
    const { apiKey, apiKeyId } = await seedAccount(t.app);
    const ws = wsClient(t.url, { apiKey });
    try {
      const first = collect<{ getUserByPrivateId: { id: string } }>(
        ws.client,
        '{ getUserByPrivateId { id } }',
      );
      await first.finished;
      assert.ok(first.results[0]?.data?.getUserByPrivateId.id);
      await graphql(t.url, {
        query: 'mutation R($id: ID!) { revokeApiKey(apiKeyId: $id) { id } }',
        variables: { id: apiKeyId },
        apiKey,
      });
      const second = collect(ws.client, '{ getUserByPrivateId { id } }');
      const outcome = await second.finished;
      const errors =
        (outcome.error as Array<{ extensions?: { code?: string } }> | undefined) ??
        second.results[0]?.errors;
      assert.equal(errors?.[0]?.extensions?.code, '100101');
    } finally {
      await ws.client.dispose();
    }
  });
});
