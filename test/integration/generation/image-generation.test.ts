import assert from 'node:assert/strict';
import http from 'node:http';
import { it } from 'node:test';
import sharp from 'sharp';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { balances, submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

const contentQuery = `query C($id: ID!) {
  getContent(contentId: $id) {
    contentId kind modelId input creditsCharged creditsRefunded
    task { status finishCode progress }
    media { mediaId kind mimeType bytes width height download { url expiresAt } }
  }
}`;

interface ContentResult {
  getContent: {
    contentId: string;
    input: Record<string, unknown>;
    creditsCharged: number;
    creditsRefunded: number;
    task: { status: string; finishCode: number; progress: number };
    media: Array<{
      mediaId: string;
      mimeType: string;
      width: number;
      height: number;
      bytes: number;
      download: { url: string };
    }>;
  };
}

describeEachBackend('image generation end to end (spec §1 flow)', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ database, t } = started);
  });

  it('submit → poll until finished with finishCode 0 → download URLs → bytes of the asked size and format', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const submitted = await submitOk(t.url, apiKey, {
      modelId: 'mdl_atelier-sketch',
      prompt: 'a lighthouse on a cliff at dawn',
      aspectRatio: '16:9',
      count: 2,
      format: 'webp',
      elementIds: ['elm_sun'],
    });
    assert.match(submitted.contentId, /^cnt_/);
    assert.match(submitted.taskId, /^tsk_/);
    assert.equal(submitted.deduplicated, false);

    const task = await waitForTask(t.url, apiKey, submitted.taskId);
    assert.equal(task.finishCode, FinishCode.Ok);
    assert.equal(task.progress, 1);

    const content = await graphql<ContentResult>(t.url, {
      query: contentQuery,
      variables: { id: submitted.contentId },
      apiKey,
    });
    const { media, creditsCharged, input } = content.body.data!.getContent;
    assert.equal(creditsCharged, 2);
    assert.equal(
      typeof input.seed,
      'number',
      'the chosen seed is recorded so the result can be reproduced',
    );
    assert.equal(media.length, 2);

    const urls = await graphql<{
      getDownloadUrls: Array<{ mediaId: string; url: string; expiresAt: string }>;
    }>(t.url, {
      query: 'query D($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { mediaId url expiresAt } }',
      variables: { ids: media.map((m) => m.mediaId) },
      apiKey,
    });
    assert.deepEqual(errorCodes(urls), []);
    for (const [i, url] of urls.body.data!.getDownloadUrls.entries()) {
      assert.equal(url.mediaId, media[i]!.mediaId);
      const expiresIn = Date.parse(url.expiresAt) - Date.now();
      assert.ok(expiresIn > 3_500_000 && expiresIn <= 3_600_000, `expires in ${expiresIn} ms`);
      const response = await fetch(url.url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/webp');
      assert.match(
        response.headers.get('content-disposition') ?? '',
        new RegExp(`attachment; filename="${submitted.contentId}-${i + 1}\\.webp"`),
      );
      const bytes = Buffer.from(await response.arrayBuffer());
      assert.equal(bytes.length, media[i]!.bytes);
      const meta = await sharp(bytes).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 1024, 576]);
    }
    assert.deepEqual(
      await balances(t.url, apiKey),
      { standard: 8 },
      'the balance dropped by the price',
    );
  });

  it('the two images of one request differ, and a resubmission with the same seed reproduces them', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const input = {
      modelId: 'mdl_atelier-sketch',
      prompt: 'red fox',
      width: 512,
      height: 512,
      count: 2,
      seed: 42,
    };
    const first = await submitOk(t.url, apiKey, input);
    const second = await submitOk(t.url, apiKey, input);
    const bytesOf = async (contentId: string) => {
      await waitForTask(t.url, apiKey, await contentTask(t, apiKey, contentId));
      const res = await graphql<ContentResult>(t.url, {
        query: contentQuery,
        variables: { id: contentId },
        apiKey,
      });
      return Promise.all(
        res.body.data!.getContent.media.map(async (m) =>
          Buffer.from(await (await fetch(m.download.url)).arrayBuffer()),
        ),
      );
    };
    const [a1, a2] = await bytesOf(first.contentId);
    const [b1, b2] = await bytesOf(second.contentId);
    assert.ok(a1 && a2 && b1 && b2);
    assert.equal(a1.equals(a2), false, 'image 1 and 2 of a request differ');
    assert.ok(a1.equals(b1) && a2.equals(b2), 'same prompt and seed, same pixels');
  });

  it('serves Range requests and ETags; a tampered or expired URL gets 403', async () => {
    const { apiKey } = await seedAccount(t.app);
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_atelier-sketch',
      prompt: 'range',
      width: 512,
      height: 512,
    });
    await waitForTask(t.url, apiKey, taskId);
    const res = await graphql<ContentResult>(t.url, {
      query: contentQuery,
      variables: { id: contentId },
      apiKey,
    });
    const { url } = res.body.data!.getContent.media[0]!.download;

    const whole = await fetch(url);
    const etag = whole.headers.get('etag');
    const body = Buffer.from(await whole.arrayBuffer());
    assert.ok(etag);
    const partial = await fetch(url, { headers: { range: 'bytes=0-99' } });
    assert.equal(partial.status, 206);
    assert.equal(partial.headers.get('content-range'), `bytes 0-99/${body.length}`);
    assert.ok(Buffer.from(await partial.arrayBuffer()).equals(body.subarray(0, 100)));
    // fetch adds Cache-Control: no-cache to a request with If-None-Match (Fetch standard), so
    // the revalidation a browser cache makes is sent with node:http.
    const revalidated = await new Promise<number>((resolve, reject) =>
      http
        .get(url, { headers: { 'if-none-match': etag } }, (r) =>
          resolve(r.resume().statusCode ?? 0),
        )
        .on('error', reject),
    );
    assert.equal(revalidated, 304);

    const parsed = new URL(url);
    const sig = parsed.searchParams.get('sig')!;
    const tampered = new URL(url);
    tampered.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`);
    const later = new URL(url);
    later.searchParams.set('exp', String(Number(parsed.searchParams.get('exp')) + 3600));
    const expired = new URL(url);
    expired.searchParams.set('exp', String(Math.floor(Date.now() / 1000) - 1));
    const otherMedia = new URL(url);
    otherMedia.pathname = '/media/med_doesnotexist000000000';
    for (const bad of [tampered, later, expired, otherMedia]) {
      const response = await fetch(bad);
      assert.equal(response.status, 403, bad.toString());
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, '110202');
    }
  });

  it('a failing engine finishes with its code and refunds exactly what was charged, once', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_test-fail',
      prompt: 'x',
      count: 2,
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.deepEqual(
      [task.finishCode, task.finishMessage],
      [4, 'The input image could not be read.'],
    );
    const res = await graphql<ContentResult>(t.url, {
      query: contentQuery,
      variables: { id: contentId },
      apiKey,
    });
    assert.deepEqual(
      [res.body.data!.getContent.creditsCharged, res.body.data!.getContent.creditsRefunded],
      [6, 6],
    );
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
    assert.equal(await ledgerCount(database, contentId, 'refund'), 1);
  });

  it('an engine that keeps throwing is retried, then finishes with code 1 and one refund', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_test-crash',
      prompt: 'x',
    });
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.EngineFailure);
    assert.match(task.finishMessage ?? '', /3 attempts/);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
    assert.equal(await ledgerCount(database, contentId, 'refund'), 1);
    const row = await database.db
      .selectFrom('tasks')
      .select('attempts')
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    assert.equal(row.attempts, 3);
  });

  it('cancelling a queued or running task finishes it with code 2 and refunds; cancelling again changes nothing', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 9 } });
    const running = await submitOk(t.url, apiKey, { modelId: 'mdl_test-slow', prompt: 'running' });
    await waitForTask(t.url, apiKey, running.taskId, (task) => task.status === 'running');
    const cancel = (taskId: string) =>
      graphql<{ cancelTask: { status: string; finishCode: number } }>(t.url, {
        query: 'mutation X($id: ID!) { cancelTask(taskId: $id) { status finishCode } }',
        variables: { id: taskId },
        apiKey,
      });
    assert.deepEqual((await cancel(running.taskId)).body.data?.cancelTask, {
      status: 'finished',
      finishCode: FinishCode.Cancelled,
    });
    assert.deepEqual(await balances(t.url, apiKey), { standard: 9 });
    assert.deepEqual((await cancel(running.taskId)).body.data?.cancelTask, {
      status: 'finished',
      finishCode: FinishCode.Cancelled,
    });
    assert.equal(await ledgerCount(database, running.contentId, 'refund'), 1);
    // The worker lost its lease: its result never lands.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const media = await database.db
      .selectFrom('media')
      .select('id')
      .where('content_id', '=', running.contentId)
      .execute();
    assert.equal(media.length, 0);
  });
});

async function contentTask(t: TestApp, apiKey: string, contentId: string): Promise<string> {
  const res = await graphql<{ getContent: { task: { taskId: string } } }>(t.url, {
    query: 'query C($id: ID!) { getContent(contentId: $id) { task { taskId } } }',
    variables: { id: contentId },
    apiKey,
  });
  return res.body.data!.getContent.task.taskId;
}

async function ledgerCount(
  database: Database,
  reference: string,
  reason: 'debit' | 'refund',
): Promise<number> {
  const rows = await database.db
    .selectFrom('credit_ledger')
    .select('id')
    .where('reference', '=', reference)
    .where('reason', '=', reason)
    .execute();
  return rows.length;
}
