import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitImage, testModels, waitForTask } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { download, testPicture, uploadOk } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

// An operator follows one generation through the logs: the request that submitted it (by its
// request id) names the task, and the worker's lines name the same task.
describeEachBackend('structured logs', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ t } = started);
  });

  it('a submission is logged under its request id with its task id, and the worker logs that task', async () => {
    const { apiKey } = await seedAccount(t.app);
    const res = await graphql<{ generateImage: { taskId: string; contentId: string } }>(t.url, {
      query: submitImage,
      variables: { input: { modelId: 'mdl_test-fast', prompt: 'follow me' } },
      apiKey,
      headers: { 'x-request-id': 'trace-generation-1' },
    });
    const { taskId, contentId } = res.body.data!.generateImage;
    await waitForTask(t.url, apiKey, taskId);

    const lines = t
      .logs()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const submitted = lines.find((l) => l.msg === 'generation submitted');
    assert.equal(submitted?.reqId, 'trace-generation-1');
    assert.equal(submitted?.taskId, taskId);
    assert.equal(submitted?.contentId, contentId);
    const started = lines.find((l) => l.msg === 'task started' && l.taskId === taskId);
    assert.equal(started?.contentId, contentId);
    assert.equal(started?.modelId, 'mdl_test-fast');
    const ended = lines.find((l) => l.msg === 'engine run ended' && l.taskId === taskId);
    assert.equal(ended?.finishCode, FinishCode.Ok);
    assert.equal(typeof ended?.ms, 'number');
    // Secrets never reach the log.
    assert.equal(t.logs().includes(apiKey), false);
  });

  it('request logs hold no signed query strings and no access_token values', async () => {
    const { apiKey } = await seedAccount(t.app);
    const picture = await testPicture(32, 32);
    const mediaId = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture,
    });
    await download(t.url, apiKey, mediaId);
    const signed = await fetch(`${t.url}/media/${mediaId}?exp=1&sig=forged-signature-value`);
    assert.equal(signed.status >= 400, true);
    // No route answers these: the 404 must not log (or echo) the signed query either.
    const preflight = await fetch(`${t.url}/uploads/med_x?exp=1&sig=preflight-signature`, {
      method: 'OPTIONS',
    });
    assert.equal(preflight.status, 404);
    assert.equal((await preflight.text()).includes('preflight-signature'), false);
    const slash = await fetch(`${t.url}/media/${mediaId}/?exp=1&sig=trailing-signature`);
    assert.equal(slash.status, 404);
    const withToken = await fetch(
      `${t.url}/graphql?query=%7B__typename%7D&access_token=leaked-token-value&other=kept`,
    );
    assert.equal(withToken.status, 200);

    const urls = t
      .logs()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url)
      .filter((url): url is string => url !== undefined);
    assert.ok(urls.some((u) => u === `/media/${mediaId}?[redacted]`));
    assert.ok(urls.some((u) => u.startsWith('/uploads/') && u.endsWith('?[redacted]')));
    assert.ok(urls.includes('/graphql?query=%7B__typename%7D&access_token=[redacted]&other=kept'));
    for (const secret of [
      'sig=',
      'exp=',
      'X-Amz-',
      'leaked-token-value',
      'forged-signature',
      'preflight-signature',
      'trailing-signature',
    ])
      assert.equal(t.logs().includes(secret), false, `${secret} reached the log`);
  });
});
