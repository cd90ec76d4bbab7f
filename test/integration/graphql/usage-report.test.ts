import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { fakeModel, submitOk, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { idTokenFor, type SeededAccount, seedAccount } from '../../helpers/seed.ts';

const models = JSON.stringify([
  fakeModel('mdl_usage-ok', {}),
  fakeModel('mdl_usage-refused', {
    failCode: FinishCode.RejectedInput,
    failMessage: 'The input image could not be read.',
  }),
  {
    ...fakeModel('mdl_usage-pool', {}),
    engine: undefined,
    engineOptions: undefined,
    backends: [{ name: 'box-1', engine: 'fake', engineOptions: {} }],
  },
]);

const reportQuery = `query Usage($from: DateTime!, $to: DateTime!, $groupBy: [UsageDimension!]!, $filter: UsageFilter) {
  usageReport(from: $from, to: $to, groupBy: $groupBy, filter: $filter) {
    day accountId modelId kind backend credential submissions finishes { code count }
    creditsCharged creditsRefunded runSeconds providerCalls providerFailures
  }
}`;

interface Row {
  day: string | null;
  accountId: string | null;
  modelId: string | null;
  kind: string | null;
  backend: string | null;
  credential: string | null;
  submissions: number;
  finishes: Array<{ code: number; count: number }>;
  creditsCharged: number;
  creditsRefunded: number;
  runSeconds: number;
  providerCalls: number;
  providerFailures: number;
}

describeEachBackend(
  'usage report (issue 32): GraphQL usageReport and GET /usage.csv',
  (backend) => {
    let database: Database;
    let t: TestApp;
    withTestApp(backend, { env: { MODELS: models } }, (started) => {
      ({ database, t } = started);
    });

    // Rows carry the database's own time of submission: the range is around now.
    const range = () => ({
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const report = (apiKey: string | undefined, variables: Record<string, unknown>) =>
      graphql<{ usageReport: Row[] | null }>(t.url, {
        query: reportQuery,
        variables: { ...range(), ...variables },
        ...(apiKey === undefined ? {} : { apiKey }),
      });
    const rowsOf = async (apiKey: string, variables: Record<string, unknown>) => {
      const res = await report(apiKey, variables);
      assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
      return res.body.data!.usageReport!;
    };

    let alice: SeededAccount;
    let bob: SeededAccount;
    let admin: SeededAccount;
    before(async () => {
      alice = await seedAccount(t.app, { credits: { standard: 100 } });
      bob = await seedAccount(t.app, { credits: { standard: 100 } });
      admin = await seedAccount(t.app, { role: 'admin' });
      const submitted = [
        await submitOk(t.url, alice.apiKey, { modelId: 'mdl_usage-ok', prompt: 'one' }),
        await submitOk(t.url, alice.apiKey, { modelId: 'mdl_usage-ok', prompt: 'two' }),
        await submitOk(t.url, alice.apiKey, { modelId: 'mdl_usage-refused', prompt: 'three' }),
        await submitOk(t.url, alice.apiKey, { modelId: 'mdl_usage-pool', prompt: 'four' }),
      ];
      for (const s of submitted) await waitForTask(t.url, alice.apiKey, s.taskId);
      const bobs = await submitOk(t.url, bob.apiKey, { modelId: 'mdl_usage-ok', prompt: 'five' });
      await waitForTask(t.url, bob.apiKey, bobs.taskId);
    });

    it('an account reads its own usage by model: submissions, finishes by code, credits, runs', async () => {
      const rows = await rowsOf(alice.apiKey, { groupBy: ['MODEL'] });
      assert.deepEqual(
        rows.map((r) => [
          r.modelId,
          r.submissions,
          r.finishes,
          r.creditsCharged,
          r.creditsRefunded,
        ]),
        [
          ['mdl_usage-ok', 2, [{ code: 0, count: 2 }], 6, 0],
          ['mdl_usage-pool', 1, [{ code: 0, count: 1 }], 3, 0],
          ['mdl_usage-refused', 1, [{ code: FinishCode.RejectedInput, count: 1 }], 3, 3],
        ],
      );
      for (const row of rows) {
        assert.equal(row.accountId, null, 'not grouped by account');
        assert.ok(row.runSeconds >= 0 && row.runSeconds < 60, String(row.runSeconds));
      }
      // Only a pool's runs are provider calls; built-in engines record none.
      assert.deepEqual(
        rows.map((r) => [r.modelId, r.providerCalls, r.providerFailures]),
        [
          ['mdl_usage-ok', 0, 0],
          ['mdl_usage-pool', 1, 0],
          ['mdl_usage-refused', 0, 0],
        ],
      );
    });

    it('groups by several dimensions: day (UTC midnight), kind, backend, credential', async () => {
      const rows = await rowsOf(alice.apiKey, {
        groupBy: ['DAY', 'KIND', 'BACKEND', 'CREDENTIAL', 'ACCOUNT'],
      });
      for (const row of rows) {
        assert.match(row.day!, /T00:00:00\.000Z$/);
        assert.equal(row.kind, 'image');
        assert.equal(row.credential, alice.apiKeyId, 'submitted with her API key');
        assert.equal(row.accountId, alice.account.id);
      }
      const pooled = rows.filter((r) => r.backend !== null);
      assert.equal(
        pooled.reduce((n, r) => n + r.submissions, 0),
        1,
      );
      assert.equal(
        rows.reduce((n, r) => n + r.submissions, 0),
        4,
      );
      const filtered = await rowsOf(alice.apiKey, {
        groupBy: ['BACKEND'],
        filter: { backend: pooled[0]!.backend, modelId: 'mdl_usage-pool' },
      });
      assert.deepEqual(
        filtered.map((r) => [r.backend, r.submissions, r.providerCalls]),
        [[pooled[0]!.backend, 1, 1]],
      );
    });

    it('an account sees only its own usage; another account’s is 110202, its own ID is fine', async () => {
      const own = await rowsOf(bob.apiKey, { groupBy: ['ACCOUNT'] });
      assert.deepEqual(
        own.map((r) => [r.accountId, r.submissions]),
        [[bob.account.id, 1]],
      );
      const named = await rowsOf(bob.apiKey, {
        groupBy: ['ACCOUNT'],
        filter: { accountId: bob.account.id },
      });
      assert.deepEqual(named, own);
      const refused = await report(bob.apiKey, {
        groupBy: ['ACCOUNT'],
        filter: { accountId: alice.account.id },
      });
      assert.deepEqual(errorCodes(refused), ['110202']);
      assert.equal(refused.body.data?.usageReport, null);
    });

    it('an admin reads everyone’s usage, or one account’s', async () => {
      const rows = await rowsOf(admin.apiKey, { groupBy: ['ACCOUNT'] });
      const byAccount = new Map(rows.map((r) => [r.accountId, r.submissions]));
      assert.equal(byAccount.get(alice.account.id), 4);
      assert.equal(byAccount.get(bob.account.id), 1);
      const one = await rowsOf(admin.apiKey, {
        groupBy: ['MODEL'],
        filter: { accountId: bob.account.id },
      });
      assert.deepEqual(
        one.map((r) => [r.modelId, r.submissions]),
        [['mdl_usage-ok', 1]],
      );
    });

    it('a bad range or grouping is 120001 naming the field, and nothing is read', async () => {
      const now = Date.now();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ from: new Date(now).toISOString(), to: new Date(now).toISOString() }, 'to'],
        [{ from: new Date(now).toISOString(), to: new Date(now - 1000).toISOString() }, 'to'],
        [
          {
            from: new Date(now - 367 * 86_400_000).toISOString(),
            to: new Date(now).toISOString(),
          },
          'to',
        ],
        [{ groupBy: [] }, 'groupBy'],
        [{ groupBy: ['DAY', 'DAY'] }, 'groupBy'],
      ];
      for (const [variables, field] of cases) {
        const res = await report(alice.apiKey, { groupBy: ['DAY'], ...variables });
        assert.deepEqual(errorCodes(res), ['120001'], JSON.stringify(variables));
        assert.equal(res.body.errors![0]!.extensions!.field, field, JSON.stringify(variables));
        assert.equal(res.body.data?.usageReport, null);
      }
      const anonymous = await report(undefined, { groupBy: ['DAY'] });
      assert.deepEqual(errorCodes(anonymous), ['100101']);
    });

    it('GET /usage.csv gives the same rows as GraphQL, as an attachment', async () => {
      const { from, to } = range();
      const rows = await rowsOf(alice.apiKey, { from, to, groupBy: ['DAY', 'MODEL'] });
      const res = await fetch(
        `${t.url}/usage.csv?${new URLSearchParams({ from, to, groupBy: 'day,model' })}`,
        { headers: { authorization: `Bearer ${alice.apiKey}` } },
      );
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
      assert.match(
        res.headers.get('content-disposition')!,
        /^attachment; filename="usage-.+\.csv"$/,
      );
      const lines = (await res.text()).trimEnd().split('\r\n');
      assert.equal(
        lines[0],
        'day,model_id,submissions,finished_0,finished_1,finished_2,finished_3,finished_4,finished_5,credits_charged,credits_refunded,run_seconds,provider_calls,provider_failures',
      );
      assert.deepEqual(
        lines.slice(1),
        rows.map((r) => {
          const finished = [0, 1, 2, 3, 4, 5].map(
            (code) => r.finishes.find((f) => f.code === code)?.count ?? 0,
          );
          return [
            r.day,
            r.modelId,
            r.submissions,
            ...finished,
            r.creditsCharged,
            r.creditsRefunded,
            r.runSeconds,
            r.providerCalls,
            r.providerFailures,
          ].join(',');
        }),
      );
      // A signed-in person (the web console) downloads the same with an ID token.
      const signedIn = await fetch(
        `${t.url}/usage.csv?${new URLSearchParams({ from, to, groupBy: 'day,model' })}`,
        { headers: { 'x-idp-token': await idTokenFor(t, alice.account.id) } },
      );
      assert.equal(signedIn.status, 200);
      assert.deepEqual((await signedIn.text()).trimEnd().split('\r\n'), lines);
    });

    it('GET /usage.csv: refused without credentials (401), with a bad range (400), another account’s (403)', async () => {
      const { from, to } = range();
      const query = (extra: Record<string, string>) =>
        `${t.url}/usage.csv?${new URLSearchParams({ from, to, groupBy: 'day', ...extra })}`;
      const anonymous = await fetch(query({}));
      assert.equal(anonymous.status, 401);
      assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, '100101');

      const badKey = await fetch(query({}), { headers: { authorization: 'Bearer svc_nope' } });
      assert.equal(badKey.status, 401);

      const headers = { authorization: `Bearer ${alice.apiKey}` };
      const backwards = await fetch(query({ to: from, from: to }), { headers });
      assert.equal(backwards.status, 400);
      const body = (await backwards.json()) as { error: { code: string; field: string } };
      assert.deepEqual([body.error.code, body.error.field], ['120001', 'to']);

      const notADate = await fetch(query({ from: 'yesterday' }), { headers });
      assert.equal(notADate.status, 400);

      const unknown = await fetch(query({ groupBy: 'day,planet' }), { headers });
      assert.equal(unknown.status, 400);

      const others = await fetch(query({ accountId: bob.account.id }), { headers });
      assert.equal(others.status, 403);
      assert.equal(((await others.json()) as { error: { code: string } }).error.code, '110202');
    });

    it('the report’s content rows and task rows agree: nothing is left out of the join', async () => {
      // The report selects both sides by created_at: one statement inserts both, so they match.
      const { rows } = await database.db
        .selectFrom('contents as c')
        .innerJoin('tasks as t', 't.content_id', 'c.id')
        .select(['c.created_at as content', 't.created_at as task'])
        .execute()
        .then((r) => ({ rows: r }));
      assert.ok(rows.length >= 5);
      for (const row of rows) assert.equal(row.task.getTime(), row.content.getTime());
    });

    it('a key with spending limits reads its own spending only; an admin’s is no admin here', async () => {
      const limitedKey = async (owner: SeededAccount) => {
        const made = await graphql<{ createApiKey: { secret: string; apiKey: { id: string } } }>(
          t.url,
          {
            query: `mutation { createApiKey(input: { name: "ci", limits: { credits: [{ category: "standard", period: day, credits: 50 }] } }) { secret apiKey { id } } }`,
            apiKey: owner.apiKey,
          },
        );
        assert.deepEqual(errorCodes(made), [], JSON.stringify(made.body.errors));
        return made.body.data!.createApiKey;
      };
      const ci = await limitedKey(alice);
      const { taskId } = await submitOk(t.url, ci.secret, {
        modelId: 'mdl_usage-ok',
        prompt: 'ci',
      });
      await waitForTask(t.url, ci.secret, taskId);
      const own = await rowsOf(ci.secret, { groupBy: ['CREDENTIAL'] });
      assert.deepEqual(
        own.map((r) => [r.credential, r.submissions]),
        [[ci.apiKey.id, 1]],
        'the account’s other credentials are not in it',
      );
      const sibling = await report(ci.secret, {
        groupBy: ['MODEL'],
        filter: { credential: alice.apiKeyId },
      });
      assert.deepEqual(errorCodes(sibling), ['110202']);

      const adminCi = await limitedKey(admin);
      assert.deepEqual(await rowsOf(adminCi.secret, { groupBy: ['ACCOUNT'] }), []);
      const others = await report(adminCi.secret, {
        groupBy: ['MODEL'],
        filter: { accountId: alice.account.id },
      });
      assert.deepEqual(errorCodes(others), ['110202']);
    });

    it('a provider call counts on its own run’s backend: a failure before a failover stays there', async () => {
      // Alice's pooled task ran once on box-1; an earlier run on box-0 had failed over.
      const task = await database.db
        .selectFrom('tasks')
        .select(['id', 'claimed_at'])
        .where('account_id', '=', alice.account.id)
        .where('model_id', '=', 'mdl_usage-pool')
        .executeTakeFirstOrThrow();
      await database.db
        .insertInto('task_attempts')
        .values({
          task_id: task.id,
          attempt: 0,
          backend_id: 'mdl_usage-pool/box-0',
          started_at: task.claimed_at!,
          outcome: 'failed_over',
          detail: 'no answer',
        })
        .execute();
      const rows = await rowsOf(admin.apiKey, {
        groupBy: ['BACKEND'],
        filter: { modelId: 'mdl_usage-pool' },
      });
      assert.deepEqual(
        rows.map((r) => [r.backend, r.submissions, r.providerCalls, r.providerFailures]),
        [
          ['mdl_usage-pool/box-0', 0, 1, 1],
          ['mdl_usage-pool/box-1', 1, 1, 0],
        ],
      );
      const failing = await rowsOf(admin.apiKey, {
        groupBy: ['MODEL'],
        filter: { backend: 'mdl_usage-pool/box-0' },
      });
      assert.deepEqual(
        failing.map((r) => [r.modelId, r.submissions, r.providerFailures]),
        [['mdl_usage-pool', 0, 1]],
      );
    });
  },
);
