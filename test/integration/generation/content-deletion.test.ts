import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances, fakeModel, submitOk, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { download, gqlOk } from '../../helpers/media.ts';
import { startS3, type TestS3 } from '../../helpers/s3.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';

// Issue 33: deleting a generation (`deleteContent`) through real GraphQL over HTTP. The owner's
// finished generation goes with its files (its download URL then answers 404), another
// account can neither see nor delete it, an unfinished one is refused and nothing changes,
// and what it was charged stays charged: the balance, the ledger and the usage report are as
// they were (deleting is not a refund). The bytes go from the local media directory, and from
// an S3 bucket, where a presigned URL handed out before then finds nothing either.

const models = JSON.stringify([
  fakeModel('mdl_test-fast', {}),
  // One step of ten minutes: held running until the test cancels it.
  fakeModel('mdl_test-hold', { durationMs: 600_000, steps: 1 }),
]);

const deleteContent = 'mutation ($id: ID!) { deleteContent(contentId: $id) }';
const contentQuery = `query ($id: ID!) { getContent(contentId: $id) {
  contentId creditsCharged task { status } media { mediaId download { url } } } }`;

interface ContentAnswer {
  getContent: {
    contentId: string;
    creditsCharged: number;
    task: { status: string };
    media: { mediaId: string; download: { url: string } }[];
  } | null;
}

describeEachBackend('deleting a generation (deleteContent)', (backend) => {
  let database: Database;
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: models } }, (started) => {
    ({ database, t } = started);
  });
  let owner: SeededAccount;
  let stranger: SeededAccount;
  before(async () => {
    owner = await seedAccount(t.app, { credits: { standard: 100 } });
    stranger = await seedAccount(t.app, { credits: { standard: 100 } });
  });

  const remove = (apiKey: string, id: string) =>
    graphql<{ deleteContent: boolean | null }>(t.url, {
      query: deleteContent,
      variables: { id },
      apiKey,
    });
  const read = (apiKey: string, id: string) =>
    graphql<ContentAnswer>(t.url, { query: contentQuery, variables: { id }, apiKey });
  const listed = async (apiKey: string) =>
    (
      await gqlOk<{ listContents: { nodes: { contentId: string }[] } }>(
        t.url,
        apiKey,
        '{ listContents(first: 100) { nodes { contentId } } }',
      )
    ).listContents.nodes.map((n) => n.contentId);
  /** The account's usage over the days around now, and its ledger, straight from the database. */
  const history = async (accountId: string, apiKey: string) => {
    const day = 86_400_000;
    const { usageReport } = await gqlOk<{ usageReport: unknown[] }>(
      t.url,
      apiKey,
      `query ($from: DateTime!, $to: DateTime!) { usageReport(from: $from, to: $to, groupBy: [MODEL]) {
        modelId submissions creditsCharged creditsRefunded finishes { code count } } }`,
      {
        from: new Date(Date.now() - 2 * day).toISOString(),
        to: new Date(Date.now() + 2 * day).toISOString(),
      },
    );
    const ledger = await database.db
      .selectFrom('credit_ledger')
      .select(['category', 'delta', 'balance_after', 'reason', 'reference'])
      .where('account_id', '=', accountId)
      .orderBy('seq')
      .execute();
    return { usageReport, ledger, balances: await balances(t.url, apiKey) };
  };

  it('the owner deletes a finished generation: its files go, its charge stays', async () => {
    const { contentId, taskId } = await submitOk(t.url, owner.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'to be deleted',
    });
    assert.equal((await waitForTask(t.url, owner.apiKey, taskId)).finishCode, FinishCode.Ok);
    const content = (await read(owner.apiKey, contentId)).body.data!.getContent!;
    const [media] = content.media;
    assert.ok(media, 'a finished image has its media');
    assert.equal((await fetch(media.download.url)).status, 200);
    const before = await history(owner.account.id, owner.apiKey);
    assert.ok(before.ledger.some((row) => row.reason === 'debit' && row.reference === contentId));
    const { storage_key: key } = await database.db
      .selectFrom('media')
      .select('storage_key')
      .where('id', '=', media.mediaId)
      .executeTakeFirstOrThrow();
    const file = path.join(t.app.config.dataDir, 'files', key);
    assert.ok(existsSync(file), 'the bytes are in the local media directory');

    // Another account: not found, as for an ID that does not exist, and nothing changes.
    assert.deepEqual(errorCodes(await remove(stranger.apiKey, contentId)), ['140004']);
    assert.deepEqual(errorCodes(await read(stranger.apiKey, contentId)), ['140004']);
    assert.equal((await fetch(media.download.url)).status, 200);
    assert.ok((await listed(owner.apiKey)).includes(contentId));

    const deleted = await remove(owner.apiKey, contentId);
    assert.deepEqual(errorCodes(deleted), [], JSON.stringify(deleted.body.errors));
    assert.equal(deleted.body.data?.deleteContent, true);

    // The download URL given before now finds nothing; nor does a fresh one.
    const gone = await fetch(media.download.url);
    assert.equal(gone.status, 404);
    assert.equal(((await gone.json()) as { error: { code: string } }).error.code, '140004');
    const urls = await graphql(t.url, {
      query: 'query ($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { url } }',
      variables: { ids: [media.mediaId] },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(urls), ['140004']);
    assert.deepEqual(errorCodes(await read(owner.apiKey, contentId)), ['140004']);
    assert.ok(!(await listed(owner.apiKey)).includes(contentId), 'out of listContents');
    const rows = await database.db
      .selectFrom('media')
      .select('id')
      .where('id', '=', media.mediaId)
      .execute();
    assert.deepEqual(rows, [], 'the media row is gone');
    assert.equal(existsSync(file), false, 'the bytes are removed from storage');

    // Deleting is not a refund: balance, ledger and usage report as they were.
    assert.deepEqual(await history(owner.account.id, owner.apiKey), before);

    // Twice: the second answers as for a generation that does not exist.
    assert.deepEqual(errorCodes(await remove(owner.apiKey, contentId)), ['140004']);
  });

  it('a queued or running generation is refused until cancelled, and nothing changes', async () => {
    const { contentId, taskId } = await submitOk(t.url, owner.apiKey, {
      modelId: 'mdl_test-hold',
      prompt: 'still running',
    });
    const before = await history(owner.account.id, owner.apiKey);
    const refused = await remove(owner.apiKey, contentId);
    assert.deepEqual(errorCodes(refused), ['120001']);
    const error = refused.body.errors![0]!;
    assert.equal(error.extensions?.field, 'contentId');
    assert.equal(error.extensions?.taskId, taskId);
    assert.match(error.message, /cancel/);
    assert.equal(refused.body.data?.deleteContent, null);
    assert.ok((await listed(owner.apiKey)).includes(contentId), 'still listed');
    assert.notEqual(
      (await read(owner.apiKey, contentId)).body.data?.getContent?.task.status,
      'finished',
    );
    assert.deepEqual(await history(owner.account.id, owner.apiKey), before);

    // Cancelled (and refunded, as every cancel is): now it may go.
    await gqlOk(t.url, owner.apiKey, 'mutation ($id: ID!) { cancelTask(taskId: $id) { taskId } }', {
      id: taskId,
    });
    assert.equal((await waitForTask(t.url, owner.apiKey, taskId)).finishCode, FinishCode.Cancelled);
    const deleted = await remove(owner.apiKey, contentId);
    assert.deepEqual(errorCodes(deleted), [], JSON.stringify(deleted.body.errors));
    assert.ok(!(await listed(owner.apiKey)).includes(contentId));
  });

  it('an image an element was made from stays with the element', async () => {
    const { contentId, taskId } = await submitOk(t.url, owner.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a character',
    });
    await waitForTask(t.url, owner.apiKey, taskId);
    const [media] = (await read(owner.apiKey, contentId)).body.data!.getContent!.media;
    await gqlOk(
      t.url,
      owner.apiKey,
      'mutation ($m: ID!) { createElement(input: { kind: character, name: "Kept", mediaId: $m }) { elementId } }',
      { m: media!.mediaId },
    );
    const deleted = await remove(owner.apiKey, contentId);
    assert.deepEqual(errorCodes(deleted), [], JSON.stringify(deleted.body.errors));
    assert.deepEqual(errorCodes(await read(owner.apiKey, contentId)), ['140004']);
    // The element's picture is still the account's, and still downloads.
    assert.equal((await download(t.url, owner.apiKey, media!.mediaId)).length > 0, true);
  });

  it('an unknown ID is not found and no credential is refused; nothing is deleted', async () => {
    const { contentId, taskId } = await submitOk(t.url, owner.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'kept',
    });
    await waitForTask(t.url, owner.apiKey, taskId);
    assert.deepEqual(errorCodes(await remove(owner.apiKey, 'cnt_nothing')), ['140004']);
    const anonymous = await graphql(t.url, { query: deleteContent, variables: { id: contentId } });
    assert.deepEqual(errorCodes(anonymous), ['100101']);
    assert.equal((await read(owner.apiKey, contentId)).body.data?.getContent?.contentId, contentId);
  });
});

describe('deleting a generation whose media is on object storage (S3)', () => {
  let s3: TestS3;
  let database: Database;
  let t: TestApp;
  before(async () => {
    s3 = await startS3();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, { env: { MODELS: models, ...s3.env } });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    await s3?.close();
  });

  it('removes the object: even a presigned URL handed out before finds nothing', async () => {
    const owner = await seedAccount(t.app, { credits: { standard: 100 } });
    const { contentId, taskId } = await submitOk(t.url, owner.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'on the object store',
    });
    await waitForTask(t.url, owner.apiKey, taskId);
    const { getContent } = await gqlOk<ContentAnswer>(t.url, owner.apiKey, contentQuery, {
      id: contentId,
    });
    const signed = await fetch(getContent!.media[0]!.download.url, { redirect: 'manual' });
    assert.equal(signed.status, 302);
    const presigned = signed.headers.get('location')!;
    assert.equal((await fetch(presigned)).status, 200);
    assert.equal((await s3.keys('media/')).length, 1);

    await gqlOk(t.url, owner.apiKey, deleteContent, { id: contentId });
    assert.deepEqual(await s3.keys('media/'), []);
    assert.equal((await fetch(presigned)).status, 404);
    const again = await fetch(getContent!.media[0]!.download.url, { redirect: 'manual' });
    assert.equal(again.status, 404);
  });
});
