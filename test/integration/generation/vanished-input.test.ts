import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { balances, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { invariantViolations } from '../../helpers/invariants.ts';
import { gqlOk, testPicture, uploadOk } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

// An input that vanished or became unusable between submission and run is an expected outcome:
// the task finishes at once with code 4 and a readable reason, refunded, never retried.

async function submit(url: string, apiKey: string, kind: string, input: object) {
  const res = await graphql<Record<string, { taskId: string }>>(url, {
    query: `mutation S($input: Generate${kind}Input!) { generate${kind}(input: $input) { taskId } }`,
    variables: { input },
    apiKey,
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data![`generate${kind}`]!.taskId;
}

describeEachBackend('inputs gone before a worker runs the task', (backend) => {
  let database: Database;
  let t: TestApp;
  // No workers until the inputs are gone; the test starts them.
  withTestApp(backend, { env: { WORKER_CONCURRENCY: '0', TASK_MAX_ATTEMPTS: '3' } }, (started) => {
    ({ database, t } = started);
  });

  const mediaRow = (id: string) =>
    database.db.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('finish with code 4 at once, refunded, in one attempt', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const picture = await testPicture(400, 400);
    const image = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture,
    });
    const portrait = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture,
    });
    const { createAvatar } = await gqlOk<{ createAvatar: { avatarId: string } }>(
      t.url,
      apiKey,
      'mutation A($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
      { input: { name: 'Ada', portraitMediaId: portrait, voiceModelId: 'voc_en-us' } },
    );
    const badge = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(128, 128),
    });
    const { createElement } = await gqlOk<{ createElement: { elementId: string } }>(
      t.url,
      apiKey,
      'mutation E($input: CreateElementInput!) { createElement(input: $input) { elementId } }',
      { input: { kind: 'object', name: 'badge', mediaId: badge } },
    );
    const still = await submit(t.url, apiKey, 'Image', {
      modelId: 'mdl_atelier-sketch',
      prompt: 'a badge',
      elementIds: [createElement.elementId],
    });
    const video = await submit(t.url, apiKey, 'Video', {
      modelId: 'mdl_atelier-motion',
      prompt: 'slow push in',
      imageMediaId: image,
      resolution: '480p',
      aspectRatio: '1:1',
      durationSeconds: 2,
    });
    const avatar = await submit(t.url, apiKey, 'AvatarVideo', {
      modelId: 'mdl_atelier-avatar',
      avatarId: createAvatar.avatarId,
      script: 'Hello there.',
      resolution: '512p',
    });
    assert.ok((await balances(t.url, apiKey)).standard! < 100, 'all were charged');

    // The image's and the element's stored bytes are deleted; the portrait becomes unusable
    // (not ready).
    for (const id of [image, badge]) {
      const { storage_key } = await mediaRow(id);
      rmSync(path.join(t.app.config.dataDir, 'files', storage_key));
    }
    await database.db
      .updateTable('media')
      .set({ state: 'pending' })
      .where('id', '=', portrait)
      .execute();
    t.app.startWorkers(t.app.http.log, 1);

    for (const [taskId, reason] of [
      [still, new RegExp(`element in elementIds \\(${createElement.elementId}\\) no longer`)],
      [video, new RegExp(`media ${image} \\(imageMediaId\\) no longer exists`)],
      [avatar, new RegExp(`portrait of avatar ${createAvatar.avatarId} no longer exists`)],
    ] as const) {
      const task = await waitForTask(t.url, apiKey, taskId);
      assert.equal(task.finishCode, FinishCode.RejectedInput, task.finishMessage ?? '');
      assert.match(task.finishMessage ?? '', reason);
      const { attempts } = await database.db
        .selectFrom('tasks')
        .select('attempts')
        .where('id', '=', taskId)
        .executeTakeFirstOrThrow();
      assert.equal(attempts, 1, 'not retried');
    }
    assert.deepEqual(await balances(t.url, apiKey), { standard: 100 }, 'all refunded');
    assert.deepEqual(await invariantViolations(database.db), [], 'the five invariants held');
  });
});
