import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { AuthenticationError, RateLimitError } from 'openai';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { balances, countContents, fakeModel } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { apiError, errorFields, openaiClient } from '../../helpers/openai.ts';
import { seedAccount } from '../../helpers/seed.ts';

const models = JSON.stringify([
  fakeModel('mdl_test-fast', {}),
  fakeModel('mdl_test-fail', {
    failCode: FinishCode.RejectedInput,
    failMessage: 'The input image could not be read.',
  }),
]);

describe('/v1 keys and failures', () => {
  let database: Database;
  let t: TestApp;
  withTestApp('pglite', { env: { MODELS: models } }, (started) => {
    ({ database, t } = started);
  });

  it('a bad key is 401 (AuthenticationError, 100101) before anything runs', async () => {
    const { apiKey } = await seedAccount(t.app);
    const wrong = `${apiKey.slice(0, -1)}${apiKey.endsWith('a') ? 'b' : 'a'}`;
    for (const key of [wrong, 'sk-not-an-atelier-key']) {
      const error = await apiError(openaiClient(t.url, key).models.list());
      assert.ok(error instanceof AuthenticationError);
      assert.deepEqual(
        [error.status, error.code, error.type],
        [401, '100101', 'authentication_error'],
      );
      assert.equal(error.headers?.get('www-authenticate'), 'Bearer error="invalid_token"');
    }
    const anonymous = await fetch(`${t.url}/v1/models`);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer');
    const body = (await anonymous.json()) as { error: Record<string, unknown> };
    assert.deepEqual(
      [body.error.code, body.error.type, body.error.param],
      ['100101', 'authentication_error', null],
    );
  });

  it('a deleted account is refused (403, 110206) with its valid key', async () => {
    const { apiKey, account } = await seedAccount(t.app);
    await t.app.services.accounts.update(account.id, { status: 'deleted' });
    const error = await apiError(openaiClient(t.url, apiKey).models.list());
    assert.deepEqual([error.status, error.code], [403, '110206']);
  });

  it('a generation that fails is 502 (160002) with its finish code, refunded, not resubmitted', async () => {
    const { apiKey, account } = await seedAccount(t.app, { credits: { standard: 10 } });
    const client = openaiClient(t.url, apiKey, { maxRetries: 2 });
    const error = await apiError(
      client.images.generate({
        model: 'mdl_test-fail',
        prompt: 'a cat',
        response_format: 'b64_json',
      }),
    );
    assert.deepEqual([error.status, error.code], [502, '160002']);
    const fields = errorFields(error);
    assert.equal(fields.finishCode, FinishCode.RejectedInput);
    assert.equal(fields.finishMessage, 'The input image could not be read.');
    assert.equal(fields.contentId, error.headers?.get('atelier-content-id'));
    assert.equal(await countContents(database, account.id), 1);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 10 });
  });

  it('a failure after the submission is 500 (190000) with the request id, logged once', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const client = openaiClient(t.url, apiKey);
    const params = { model: 'mdl_test-fast', prompt: 'a cat' };
    const keyed = { headers: { 'Idempotency-Key': 'broken-1' } };
    const [image] = (await client.images.generate(params, keyed)).data ?? [];
    const signed = new URL(image!.url!);
    const mediaId = signed.pathname.split('/').at(-1)!;
    const found = await t.app.services.media.resolveDownload(
      mediaId,
      signed.searchParams.get('exp') ?? undefined,
      signed.searchParams.get('sig') ?? undefined,
    );
    assert.ok(found !== null && 'path' in found);
    // The stored file became something the server cannot read: its fault, not the client's.
    rmSync(found.path);
    mkdirSync(found.path);

    const error = await apiError(
      client.images.generate(
        { ...params, response_format: 'b64_json' },
        { headers: { ...keyed.headers, 'x-request-id': 'broken-v1-1' } },
      ),
    );
    assert.deepEqual([error.status, error.code, error.type], [500, '190000', 'server_error']);
    assert.equal(errorFields(error).requestId, 'broken-v1-1');
    assert.equal(error.requestID, 'broken-v1-1');
    const logged = t
      .logs()
      .split('\n')
      .filter((line) => line.includes('"reqId":"broken-v1-1"') && line.includes('"err"'));
    assert.equal(logged.length, 1, logged.join('\n'));
  });

  it('unknown /v1 routes and unreadable bodies answer in the same shape', async () => {
    const { apiKey } = await seedAccount(t.app);
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const missing = await fetch(`${t.url}/v1/videos`, { method: 'POST', headers, body: '{}' });
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, '140004');
    const garbled = await fetch(`${t.url}/v1/images/generations`, {
      method: 'POST',
      headers,
      body: '{"prompt": ',
    });
    assert.equal(garbled.status, 400);
    const body = (await garbled.json()) as { error: Record<string, unknown> };
    assert.deepEqual([body.error.code, body.error.type], ['120001', 'invalid_request_error']);
  });
});

describe('/v1 counts in the account window GraphQL uses', () => {
  let t: TestApp;
  withTestApp('pglite', { env: { RATE_LIMIT_PER_WINDOW: '3' } }, (started) => {
    ({ t } = started);
  });

  it('past the limit: 429 (RateLimitError, 150029) with Retry-After, whichever API spent it', async () => {
    const { apiKey } = await seedAccount(t.app);
    const client = openaiClient(t.url, apiKey);
    await client.models.list();
    await graphql(t.url, { query: '{ listModels { nodes { modelId } } }', apiKey });
    await client.models.list();
    const error = await apiError(client.models.list());
    assert.ok(error instanceof RateLimitError);
    assert.deepEqual([error.status, error.code, error.type], [429, '150029', 'rate_limit_error']);
    assert.ok(Number(error.headers?.get('retry-after')) > 0);
    assert.equal(error.headers?.get('x-should-retry'), 'true');
    const refused = await graphql(t.url, { query: '{ listModels { nodes { modelId } } }', apiKey });
    assert.equal(refused.status, 429);
    // Another account has a window of its own.
    const other = await seedAccount(t.app);
    await openaiClient(t.url, other.apiKey).models.list();
  });
});
