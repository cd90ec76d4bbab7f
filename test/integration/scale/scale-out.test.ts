import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { type Database, openDatabase } from '../../../src/store/database.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer, startWorker } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { submitOk, testModels } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { startS3, type TestS3 } from '../../helpers/s3.ts';
import { collect, wsClient } from '../../helpers/ws.ts';

// The scale-out proof: two API processes and two worker processes on one PostgreSQL, media in
// one shared directory or on S3 (then each process has a directory of its own). 200 generations
// submitted across both APIs by two accounts, watched by a subscriber per account on each API.

const generations = 200;

type Update = { myTaskUpdates: { taskId: string; status: string; finishCode: number | null } };

for (const media of ['a shared media directory', 'media on S3, no shared directory'] as const) {
  describe(
    `two APIs and two workers on one PostgreSQL, ${media} [postgres: processes]`,
    {
      skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
    },
    () => scaleOut(media === 'media on S3, no shared directory'),
  );
}

function scaleOut(onS3: boolean): void {
  const processes: RunningServer[] = [];
  const dataDirs: string[] = [];
  let drop: () => Promise<void>;
  let database: Database;
  let s3: TestS3 | undefined;
  let env: Record<string, string>;
  /** With S3 every process gets a directory of its own: nothing on disk is shared. */
  const dataDir = () => {
    if (dataDirs.length > 0 && !onS3) return dataDirs[0]!;
    dataDirs.push(mkdtempSync(path.join(tmpdir(), 'atelier-scale-')));
    return dataDirs.at(-1)!;
  };
  before(async () => {
    const created = await createEmptyPostgresDatabase();
    drop = created.drop;
    s3 = onS3 ? await startS3() : undefined;
    env = { DATABASE_URL: created.url, MODELS: testModels, TASK_POLL_MS: '500', ...s3?.env };
    assert.equal((await atelier(['migrate'], { ...env, DATA_DIR: dataDir() })).code, 0);
    database = await openDatabase({ backend: 'postgres', url: created.url, poolSize: 2 });
  });
  after(async () => {
    for (const p of processes) await p.stop();
    await database?.close();
    await drop?.();
    await s3?.close();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  const account = async (alias: string) => {
    const created = await atelier(
      ['account', 'create', '--alias', alias, '--api-key-access', '--credits', 'standard=1000'],
      { ...env, DATA_DIR: dataDir() },
    );
    const { id } = JSON.parse(created.stdout) as { id: string };
    const key = await atelier(['apikey', 'create', '--account', id], {
      ...env,
      DATA_DIR: dataDir(),
    });
    return (JSON.parse(key.stdout) as { secret: string }).secret;
  };

  it('200 generations finish exactly once, claimed once, and every subscriber hears of each', async (t) => {
    const keys = await Promise.all([account('scale-a'), account('scale-b')]);
    const apis = await Promise.all(
      // Debug logs: each API says when a subscription starts, so nothing is submitted before.
      [0, 1].map(() =>
        startServer({ ...env, DATA_DIR: dataDir(), WORKER_CONCURRENCY: '0', LOG_LEVEL: 'debug' }),
      ),
    );
    processes.push(...apis);
    const workers = await Promise.all(
      [0, 1].map(() =>
        startWorker({
          ...env,
          DATA_DIR: dataDir(),
          WORKER_CONCURRENCY: '4',
          TASK_LEASE_MS: '10000',
        }),
      ),
    );
    processes.push(...workers);

    // A subscriber per account on each API, before anything is submitted.
    const subscribers = keys.flatMap((apiKey, account) =>
      apis.map((api, apiIndex) => {
        const ws = wsClient(api.url, { apiKey });
        t.after(() => ws.client.dispose());
        const updates = collect<Update>(
          ws.client,
          'subscription { myTaskUpdates { taskId status finishCode } }',
        );
        return { account, apiIndex, updates };
      }),
    );
    await Promise.all(apis.map((api) => api.logged('"msg":"operation started"', keys.length)));

    // Which worker holds what, sampled while the queue runs.
    const owners = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows = await database.db
          .selectFrom('tasks')
          .select('lease_owner')
          .distinct()
          .where('status', '=', 'running')
          .execute();
        for (const r of rows) if (r.lease_owner !== null) owners.add(r.lease_owner);
        await sleep(10);
      }
    })();

    // 200 submissions, alternating APIs and accounts, 20 at a time.
    const submitted: Array<{ account: number; api: number; taskId: string; contentId: string }> =
      [];
    for (let batch = 0; batch < generations / 20; batch++) {
      submitted.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, async (_, j) => {
            const i = batch * 20 + j;
            const [account, api] = [i % 2, Math.floor(i / 2) % 2];
            const ids = await submitOk(apis[api]!.url, keys[account]!, {
              modelId: 'mdl_test-fast',
              prompt: `scale ${i}`,
              idempotencyKey: `scale-${i}`,
            });
            return { account, api, ...ids };
          }),
        )),
      );
    }
    assert.equal(new Set(submitted.map((s) => s.taskId)).size, generations);

    // Every subscriber hears every task of its account finish.
    const deadline = Date.now() + 60_000;
    const finishedSeen = (s: (typeof subscribers)[number]) =>
      new Set(
        s.updates.results
          .map((r) => r.data?.myTaskUpdates)
          .filter((u) => u?.status === 'finished')
          .map((u) => u!.taskId),
      );
    for (const s of subscribers) {
      const expected = submitted.filter((x) => x.account === s.account).map((x) => x.taskId);
      for (;;) {
        const seen = finishedSeen(s);
        if (expected.every((id) => seen.has(id))) break;
        if (Date.now() > deadline) {
          const missing = expected.filter((id) => !seen.has(id)).length;
          assert.fail(`subscriber of account ${s.account} on API ${s.apiIndex} missed ${missing}`);
        }
        await sleep(50);
      }
      assert.deepEqual(
        s.updates.results.filter((r) => r.errors !== undefined),
        [],
      );
    }
    sampling = false;
    await sampler;

    const tasks = await database.db
      .selectFrom('tasks')
      .select(['id', 'status', 'finish_code', 'attempts'])
      .execute();
    assert.equal(tasks.length, generations);
    assert.ok(
      tasks.every((task) => task.status === 'finished' && task.finish_code === FinishCode.Ok),
    );
    assert.ok(
      tasks.every((task) => task.attempts === 1),
      'no task was claimed twice',
    );
    const workerPids = workers.map((w) => `:${w.child.pid}:`);
    assert.ok(
      [...owners].every((o) => workerPids.some((pid) => o.includes(pid))),
      'only the two workers claimed',
    );
    for (const pid of workerPids)
      assert.ok(
        [...owners].some((o) => o.includes(pid)),
        `worker ${pid} took a share`,
      );

    // A result is downloadable through the API that did not take the submission.
    for (const sample of submitted.slice(0, 4)) {
      const other = apis[1 - sample.api]!;
      const apiKey = keys[sample.account]!;
      const content = await graphql<{ getContent: { media: Array<{ mediaId: string }> } }>(
        other.url,
        {
          query: 'query C($id: ID!) { getContent(contentId: $id) { media { mediaId } } }',
          variables: { id: sample.contentId },
          apiKey,
        },
      );
      assert.deepEqual(errorCodes(content), []);
      const mediaIds = content.body.data!.getContent.media.map((m) => m.mediaId);
      const urls = await graphql<{ getDownloadUrls: Array<{ url: string }> }>(other.url, {
        query: 'query U($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { url } }',
        variables: { ids: mediaIds },
        apiKey,
      });
      const file = await fetch(urls.body.data!.getDownloadUrls[0]!.url);
      assert.equal(file.status, 200, `${file.url}: ${await file.clone().text()}`);
      assert.ok((await file.arrayBuffer()).byteLength > 0);
    }
    assert.deepEqual(await invariantViolations(database.db), [], 'the five invariants held');
  });
}
