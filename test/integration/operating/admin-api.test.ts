import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { remoteImageModel } from '../../helpers/remote-engines.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';
import { OpenAiStandin } from '../../helpers/standins/openai.ts';

// Issue 32 §1: the operator's side of the GraphQL API. Admin accounts find and read accounts,
// grant and take back credits with a reason, suspend and reactivate, and read every account's
// tasks with the failure detail the account itself only sees as a class. Everyone else gets
// 110202 and changes nothing. The model server is OpenAI's images API (a protocol stand-in).

const accountsQuery = `query A($search: String, $status: AccountStatus, $first: Int, $after: String) {
  adminAccounts(search: $search, status: $status, first: $first, after: $after) {
    nodes { id alias status emails creditBalances { category amount } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const adjust = (verb: 'Grant' | 'Deduct') => `mutation M($input: CreditAdjustmentInput!) {
  admin${verb}Credits(input: $input) { category amount }
}`;
const setStatus = `mutation S($id: ID!, $status: AccountStatus!) {
  adminSetAccountStatus(accountId: $id, status: $status) { id status }
}`;
const tasksQuery = `query T($filter: OperatorTaskFilter, $first: Int, $after: String) {
  adminTasks(filter: $filter, first: $first, after: $after) {
    nodes {
      taskId accountId accountAlias modelId status finishCode finishMessage backend
      creditsCharged creditsRefunded
      failure { backend outcome providerStatus detail }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;
const me = '{ getUserByPrivateId { id } }';

describeEachBackend('the admin API (issue 32 §1)', (backend) => {
  const providerKey = 'sk-standin-admin-0123456789abcdef';
  const standin = new OpenAiStandin(providerKey);
  const modelId = 'mdl_oa-admin';
  let database: Database;
  let t: TestApp;
  let admin: SeededAccount;

  before(async () => {
    await standin.server.listen();
    database = await createTestDatabase(backend);
    t = await startTestApp(database, {
      env: {
        REMOTE_KEY: providerKey,
        MODELS: JSON.stringify([
          remoteImageModel(modelId, standin.baseUrl, 'gpt-image-1', { maxAttempts: 1 }),
        ]),
      },
    });
    admin = await seedAccount(t.app, { role: 'admin' });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    await standin.server.close();
  });

  it('refuses every admin field to a user account with 110202 and changes nothing', async () => {
    const user = await seedAccount(t.app, { credits: { standard: 7 } });
    const asUser = (query: string, variables: Record<string, unknown> = {}) =>
      graphql(t.url, { query, variables, apiKey: user.apiKey });
    const refused = [
      await asUser(accountsQuery),
      await asUser(`{ adminAccount(accountId: "${user.account.id}") { id } }`),
      await asUser(tasksQuery),
      await asUser(adjust('Grant'), {
        input: { accountId: user.account.id, category: 'standard', amount: 5, reason: 'self' },
      }),
      await asUser(setStatus, { id: admin.account.id, status: 'suspended' }),
    ];
    for (const answer of refused) assert.deepEqual(errorCodes(answer), ['110202']);
    assert.deepEqual(await balances(t.url, user.apiKey), { standard: 7 });
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey: admin.apiKey })), []);
  });

  it('finds accounts by part of an alias, a sign-in email or a whole ID, by status, a page at a time', async () => {
    const names = ['ops-find-amber', 'ops-find-basil', 'ops-find-cedar'];
    const made = [];
    for (const alias of names) {
      made.push(await t.app.services.accounts.create({ alias, credits: { standard: 3 } }));
    }
    await t.app.services.identityProvider!.addUser({
      accountId: made[1]!.id,
      email: 'basil.owner@example.test',
      password: 'a long enough password',
    });
    const find = async (variables: Record<string, unknown>) => {
      const answer = await graphql<{
        adminAccounts: {
          nodes: Array<{ id: string; alias: string; status: string; emails: string[] }>;
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
        };
      }>(t.url, { query: accountsQuery, variables, apiKey: admin.apiKey });
      assert.deepEqual(errorCodes(answer), [], JSON.stringify(answer.body.errors));
      return answer.body.data!.adminAccounts;
    };
    assert.deepEqual(
      (await find({ search: 'OPS-FIND' })).nodes.map((a) => a.alias),
      names,
      'case-insensitive, by alias',
    );
    const byEmail = await find({ search: 'basil.owner@' });
    assert.deepEqual(
      byEmail.nodes.map((a) => [a.alias, a.emails]),
      [['ops-find-basil', ['basil.owner@example.test']]],
    );
    assert.deepEqual(
      (await find({ search: made[2]!.id })).nodes.map((a) => a.alias),
      ['ops-find-cedar'],
    );
    assert.deepEqual((await find({ search: '%' })).nodes, [], 'a wildcard is a character');

    const first = await find({ search: 'ops-find', first: 2 });
    assert.deepEqual(
      first.nodes.map((a) => a.alias),
      names.slice(0, 2),
    );
    assert.equal(first.pageInfo.hasNextPage, true);
    const second = await find({ search: 'ops-find', first: 2, after: first.pageInfo.endCursor });
    assert.deepEqual(
      second.nodes.map((a) => a.alias),
      names.slice(2),
    );
    assert.equal(second.pageInfo.hasNextPage, false);

    const forged = await graphql(t.url, {
      query: accountsQuery,
      variables: { after: 'not-a-cursor' },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(errorCodes(forged), ['120001']);
  });

  it('grants and deducts with a reason on the ledger; a deduction past the balance is 120001 and changes nothing', async () => {
    const user = await seedAccount(t.app, { credits: { standard: 10 } });
    const change = (verb: 'Grant' | 'Deduct', amount: number, reason = 'goodwill') =>
      graphql<Record<string, { category: string; amount: number }>>(t.url, {
        query: adjust(verb),
        variables: { input: { accountId: user.account.id, category: 'standard', amount, reason } },
        apiKey: admin.apiKey,
      });
    const granted = await change('Grant', 15, 'outage credit, ticket 4411');
    assert.deepEqual(granted.body.data?.adminGrantCredits, { category: 'standard', amount: 25 });
    const deducted = await change('Deduct', 20, 'chargeback');
    assert.deepEqual(deducted.body.data?.adminDeductCredits, { category: 'standard', amount: 5 });

    const tooMuch = await change('Deduct', 6, 'too much');
    assert.deepEqual(errorCodes(tooMuch), ['120001']);
    assert.equal(tooMuch.body.errors?.[0]?.extensions?.field, 'amount');
    const noReason = await change('Grant', 1, '   ');
    assert.deepEqual(errorCodes(noReason), ['120001']);
    assert.equal(noReason.body.errors?.[0]?.extensions?.field, 'reason');
    assert.deepEqual(await balances(t.url, user.apiKey), { standard: 5 });

    const ledger = await database.db
      .selectFrom('credit_ledger')
      .select(['delta', 'reason', 'reference', 'balance_after'])
      .where('account_id', '=', user.account.id)
      .orderBy('seq')
      .execute();
    assert.deepEqual(ledger.slice(1), [
      { delta: 15, reason: 'grant', reference: 'outage credit, ticket 4411', balance_after: 25 },
      { delta: -20, reason: 'deduction', reference: 'chargeback', balance_after: 5 },
    ]);
  });

  it('a suspension stops the account’s key on the next request; reactivation lets it back in', async () => {
    const user = await seedAccount(t.app);
    const suspend = await graphql<{ adminSetAccountStatus: { status: string } }>(t.url, {
      query: setStatus,
      variables: { id: user.account.id, status: 'suspended' },
      apiKey: admin.apiKey,
    });
    assert.equal(suspend.body.data?.adminSetAccountStatus.status, 'suspended');
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey: user.apiKey })), [
      '100101',
    ]);
    const suspended = await graphql<{ adminAccounts: { nodes: Array<{ id: string }> } }>(t.url, {
      query: accountsQuery,
      variables: { status: 'suspended' },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(
      suspended.body.data?.adminAccounts.nodes.map((a) => a.id),
      [user.account.id],
    );
    const own = await graphql(t.url, {
      query: setStatus,
      variables: { id: admin.account.id, status: 'suspended' },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(errorCodes(own), ['120001'], 'an admin cannot lock itself out');
    const gone = await seedAccount(t.app);
    await t.app.services.accounts.update(gone.account.id, { status: 'deleted' });
    const undelete = await graphql(t.url, {
      query: setStatus,
      variables: { id: gone.account.id, status: 'active' },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(errorCodes(undelete), ['120001'], 'deletion is undone at the command line');
    assert.equal((await t.app.services.accounts.show({ id: gone.account.id })).status, 'deleted');

    await graphql(t.url, {
      query: setStatus,
      variables: { id: user.account.id, status: 'active' },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey: user.apiKey })), []);
  });

  it('revokes a leaked key of an account: it stops at once, the account keeps its other keys', async () => {
    const user = await seedAccount(t.app);
    const spare = await t.app.services.apiKeys.issue(user.account.id, { name: 'spare' });
    const revoke = (accountId: string, apiKeyId: string, apiKey = admin.apiKey) =>
      graphql<{ adminRevokeApiKey: { id: string; revokedAt: string | null } }>(t.url, {
        query: `mutation R($a: ID!, $k: ID!) { adminRevokeApiKey(accountId: $a, apiKeyId: $k) { id revokedAt } }`,
        variables: { a: accountId, k: apiKeyId },
        apiKey,
      });
    assert.deepEqual(errorCodes(await revoke(user.account.id, user.apiKeyId, spare.secret)), [
      '110202',
    ]);
    assert.deepEqual(
      errorCodes(await revoke(admin.account.id, user.apiKeyId)),
      ['140004'],
      'a key is revoked within its own account only',
    );
    const revoked = await revoke(user.account.id, user.apiKeyId);
    assert.equal(revoked.body.data?.adminRevokeApiKey.id, user.apiKeyId);
    assert.notEqual(revoked.body.data?.adminRevokeApiKey.revokedAt, null);
    assert.equal((await graphql(t.url, { query: me, apiKey: user.apiKey })).status, 401);
    assert.deepEqual(errorCodes(await graphql(t.url, { query: me, apiKey: spare.secret })), []);
  });

  it('shows a failed task’s provider status, detail and backend to admins; the account sees only the class', async () => {
    const user = await seedAccount(t.app, { credits: { standard: 20 } });
    standin.server.failNext(
      (r) => (r.json as { prompt?: string } | undefined)?.prompt === 'a bad size',
      1,
      {
        status: 400,
        headers: { 'content-type': 'application/json' },
        body: '{"error":{"message":"Invalid value for size: the model does not offer it","type":"invalid_request_error","param":"size","code":"invalid_value"}}',
      },
    );
    const { taskId } = await submitOk(t.url, user.apiKey, { modelId, prompt: 'a bad size' });
    const seen = await waitForTask(t.url, user.apiKey, taskId);
    assert.equal(seen.finishCode, FinishCode.EngineFailure);
    assert.doesNotMatch(seen.finishMessage ?? '', /Invalid value|400|127\.0\.0\.1/);

    const answer = await graphql<{
      adminTasks: { nodes: Array<Record<string, unknown>> };
    }>(t.url, {
      query: tasksQuery,
      variables: { filter: { accountId: user.account.id, failed: true } },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(errorCodes(answer), [], JSON.stringify(answer.body.errors));
    const [task] = answer.body.data!.adminTasks.nodes;
    assert.equal(task?.taskId, taskId);
    assert.equal(task?.accountId, user.account.id);
    assert.equal(task?.finishCode, FinishCode.EngineFailure);
    assert.equal(task?.creditsCharged, task?.creditsRefunded);
    const failure = task?.failure as Record<string, unknown>;
    assert.equal(failure.backend, `${modelId}/openai-images`);
    assert.equal(failure.outcome, 'failed');
    assert.equal(failure.providerStatus, 400);
    assert.match(String(failure.detail), /HTTP 400 \(invalid_value\): Invalid value for size/);
    assert.doesNotMatch(String(failure.detail), new RegExp(providerKey));

    const byBackend = await graphql<{ adminTasks: { nodes: Array<{ taskId: string }> } }>(t.url, {
      query: tasksQuery,
      variables: {
        filter: { backend: `${modelId}/openai-images`, finishCode: FinishCode.EngineFailure },
      },
      apiKey: admin.apiKey,
    });
    assert.ok(byBackend.body.data!.adminTasks.nodes.some((n) => n.taskId === taskId));
    const elsewhere = await graphql<{ adminTasks: { nodes: unknown[] } }>(t.url, {
      query: tasksQuery,
      variables: { filter: { backend: 'mdl_none/box', accountId: user.account.id } },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(elsewhere.body.data!.adminTasks.nodes, []);
  });

  it('sets a model’s status at runtime: maintenance refuses submissions, null gives it back; recorded', async () => {
    const user = await seedAccount(t.app, { credits: { standard: 10 } });
    const setModel = (apiKey: string, status: string | null) =>
      graphql<{ adminSetModelStatus: { modelId: string; status: string } }>(t.url, {
        query: `mutation S($status: ModelStatus) { adminSetModelStatus(modelId: "${modelId}", status: $status) { modelId status } }`,
        variables: { status },
        apiKey,
      });
    assert.deepEqual(errorCodes(await setModel(user.apiKey, 'maintenance')), ['110202']);
    const set = await setModel(admin.apiKey, 'maintenance');
    assert.deepEqual(set.body.data?.adminSetModelStatus, { modelId, status: 'maintenance' });
    const refused = await graphql(t.url, {
      query: `mutation { generateImage(input: { modelId: "${modelId}", prompt: "a lighthouse" }) { taskId } }`,
      apiKey: user.apiKey,
    });
    assert.deepEqual(errorCodes(refused), ['110202']);
    assert.equal(refused.body.errors?.[0]?.extensions?.status, 'maintenance');
    assert.deepEqual(await balances(t.url, user.apiKey), { standard: 10 });

    const back = await setModel(admin.apiKey, null);
    assert.deepEqual(back.body.data?.adminSetModelStatus, { modelId, status: 'ready' });
    const { taskId } = await submitOk(t.url, user.apiKey, { modelId, prompt: 'a lighthouse' });
    assert.equal((await waitForTask(t.url, user.apiKey, taskId)).finishCode, FinishCode.Ok);

    const unknown = await graphql(t.url, {
      query: 'mutation { adminSetModelStatus(modelId: "mdl_nope", status: deprecated) { status } }',
      apiKey: admin.apiKey,
    });
    assert.deepEqual(errorCodes(unknown), ['140004']);
    const log = await graphql<{ auditLog: { nodes: Array<{ detail: unknown }> } }>(t.url, {
      query: `{ auditLog(filter: { action: "model.status_changed" }) { nodes { detail } } }`,
      apiKey: admin.apiKey,
    });
    assert.deepEqual(
      log.body.data?.auditLog.nodes.map((e) => e.detail),
      [
        { from: 'maintenance', to: null },
        { from: null, to: 'maintenance' },
      ],
    );
  });

  it('reads the queue’s depth and wait over time back from the tasks’ own times', async () => {
    const user = await seedAccount(t.app);
    // Three generations of a quiet afternoon long ago, as the queue recorded them.
    const at = (time: string) => `2020-01-01T${time}Z`;
    const tasks = [
      { id: 'a', created: at('00:00:30'), started: at('00:01:30'), finished: at('00:02:30') },
      { id: 'b', created: at('00:00:45'), started: at('00:02:45'), finished: at('00:10:00') },
      { id: 'c', created: at('00:03:10'), started: null, finished: at('00:05:00') },
    ];
    for (const task of tasks) {
      await database.db
        .insertInto('contents')
        .values({
          id: `cnt_history-${task.id}`,
          account_id: user.account.id,
          kind: 'image',
          model_id: 'mdl_history',
          input: '{}',
          input_hash: task.id,
          credits_charged: 0,
          created_at: new Date(task.created),
        })
        .execute();
      await database.db
        .insertInto('tasks')
        .values({
          id: `tsk_history-${task.id}`,
          content_id: `cnt_history-${task.id}`,
          account_id: user.account.id,
          model_id: 'mdl_history',
          max_attempts: 1,
          status: 'finished',
          finish_code: task.started === null ? 2 : 0,
          created_at: new Date(task.created),
          started_at: task.started === null ? null : new Date(task.started),
          finished_at: new Date(task.finished),
        })
        .execute();
    }
    const history = async (variables: Record<string, unknown>, apiKey = admin.apiKey) =>
      graphql<{ adminQueueHistory: Array<Record<string, unknown>> }>(t.url, {
        query: `query H($from: DateTime!, $to: DateTime!, $points: Int, $modelId: ID) {
          adminQueueHistory(from: $from, to: $to, points: $points, modelId: $modelId) {
            at queued running submitted meanWaitSeconds
          }
        }`,
        variables,
        apiKey,
      });
    const answer = await history({
      from: at('00:00:00'),
      to: at('00:04:00'),
      points: 5,
      modelId: 'mdl_history',
    });
    assert.deepEqual(errorCodes(answer), [], JSON.stringify(answer.body.errors));
    assert.deepEqual(answer.body.data?.adminQueueHistory, [
      { at: '2020-01-01T00:00:00.000Z', queued: 0, running: 0, submitted: 2, meanWaitSeconds: 90 },
      {
        at: '2020-01-01T00:01:00.000Z',
        queued: 2,
        running: 0,
        submitted: 0,
        meanWaitSeconds: null,
      },
      {
        at: '2020-01-01T00:02:00.000Z',
        queued: 1,
        running: 1,
        submitted: 0,
        meanWaitSeconds: null,
      },
      {
        at: '2020-01-01T00:03:00.000Z',
        queued: 0,
        running: 1,
        submitted: 1,
        meanWaitSeconds: null,
      },
      {
        at: '2020-01-01T00:04:00.000Z',
        queued: 1,
        running: 1,
        submitted: 0,
        meanWaitSeconds: null,
      },
    ]);

    const backwards = await history({ from: at('00:04:00'), to: at('00:00:00'), points: 1 });
    assert.deepEqual(errorCodes(backwards), ['120001']);
    assert.deepEqual(backwards.body.errors?.[0]?.extensions?.problems, [
      { field: 'to', message: 'must be after from' },
      { field: 'points', message: 'must be a whole number from 2 to 500' },
    ]);
    const asUser = await history({ from: at('00:00:00'), to: at('00:04:00') }, user.apiKey);
    assert.deepEqual(errorCodes(asUser), ['110202']);
  });

  it('reads one account whole: balances, keys without secrets, connections, webhooks, recent tasks', async () => {
    const user = await seedAccount(t.app, { credits: { standard: 30 } });
    const { taskId } = await submitOk(t.url, user.apiKey, { modelId, prompt: 'a lighthouse' });
    await waitForTask(t.url, user.apiKey, taskId);
    const answer = await graphql<{ adminAccount: Record<string, unknown> }>(t.url, {
      query: `query O($id: ID!) { adminAccount(accountId: $id) {
        id alias status role apiKeyAccess creditBalances { category amount }
        apiKeys { id prefix name revokedAt }
        mcpConnections { clientId }
        webhookEndpoints { id url }
        recentTasks(first: 5) { taskId status finishCode }
      } }`,
      variables: { id: user.account.id },
      apiKey: admin.apiKey,
    });
    assert.deepEqual(errorCodes(answer), [], JSON.stringify(answer.body.errors));
    const account = answer.body.data!.adminAccount;
    assert.equal(account.status, 'active');
    assert.equal(account.role, 'user');
    assert.deepEqual(account.creditBalances, [{ category: 'standard', amount: 25 }]);
    assert.deepEqual(account.apiKeys, [
      { id: user.apiKeyId, prefix: user.apiKey.slice(0, 8), name: 'test', revokedAt: null },
    ]);
    assert.ok(!JSON.stringify(account).includes(user.apiKey), 'never a secret');
    assert.deepEqual(account.mcpConnections, []);
    assert.deepEqual(account.webhookEndpoints, []);
    assert.deepEqual(account.recentTasks, [
      { taskId, status: 'finished', finishCode: FinishCode.Ok },
    ]);
    const missing = await graphql<{ adminAccount: unknown }>(t.url, {
      query: '{ adminAccount(accountId: "acc_missing") { id } }',
      apiKey: admin.apiKey,
    });
    assert.equal(missing.body.data?.adminAccount, null);
  });
});
