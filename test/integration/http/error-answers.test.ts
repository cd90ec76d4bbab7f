import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { it } from 'node:test';
import { httpStatusOf } from '../../../src/edge/http/error-status.ts';
import { AppError, type ErrorCode } from '../../../src/shared/errors.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { gqlOk, testPicture, uploadOk } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Every HTTP route outside GraphQL answers an error the same way: the catalogue's status for
// its code (src/edge/http/error-status.ts) and {"error":{code,message,retryable,requestId}},
// the request id being the one in `x-request-id`. A client handles one shape, not one a route.

interface ErrorBody {
  error?: { code?: string; message?: unknown; retryable?: unknown; requestId?: unknown };
}

async function assertCatalogueAnswer(
  res: Response,
  code: ErrorCode,
  what: string,
  status = httpStatusOf[code],
) {
  const body = (await res.json()) as ErrorBody;
  assert.equal(body.error?.code, code, what);
  assert.equal(res.status, status, what);
  assert.equal(typeof body.error?.message, 'string', what);
  assert.equal(body.error?.retryable, new AppError(code, '').retryable, what);
  assert.equal(body.error?.requestId, res.headers.get('x-request-id'), what);
}

const metricsToken = 'a-metrics-token-of-some-length';

describeEachBackend('HTTP routes answer errors from one table', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { METRICS_TOKEN: metricsToken } }, (started) => {
    ({ t } = started);
  });

  it('every route: the catalogue status, code, message, retryable and request id', async () => {
    const json = { 'content-type': 'application/json' };
    const cases: [string, Promise<Response>, ErrorCode][] = [
      ['unknown route', fetch(`${t.url}/nowhere`), '140004'],
      ['unknown page asset', fetch(`${t.url}/assets/nothing.js`), '140004'],
      ['bad download signature', fetch(`${t.url}/media/med_x?exp=1&sig=bad`), '110202'],
      [
        'bad upload signature',
        fetch(`${t.url}/uploads/med_x?exp=1&sig=bad`, { method: 'PUT', body: 'x' }),
        '110202',
      ],
      [
        'wrong password',
        fetch(`${t.url}/idp/sign-in`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ email: 'nobody@example.test', password: 'not the password' }),
        }),
        '100101',
      ],
      ['metrics without the token', fetch(`${t.url}/metrics`), '100101'],
      ['NUL in a query string', fetch(`${t.url}/media/med_x?exp=1&sig=a%00b`), '120001'],
      [
        'sign-in body that is not JSON',
        fetch(`${t.url}/idp/sign-in`, { method: 'POST', headers: json, body: '{"email":' }),
        '120001',
      ],
    ];
    for (const [what, res, code] of cases) await assertCatalogueAnswer(await res, code, what);
  });

  it("Fastify's own refusals keep RFC 9110's status in the same shape", async () => {
    const res = await fetch(`${t.url}/idp/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'text/x-unknown' },
      body: 'email=a',
    });
    await assertCatalogueAnswer(res, '120001', 'unsupported media type', 415);
  });

  it('a download that breaks on the server is 190000 with the request id, logged once', async () => {
    const { apiKey } = await seedAccount(t.app);
    const mediaId = await uploadOk(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(64, 64),
    });
    const data = await gqlOk<{ getDownloadUrls: { url: string }[] }>(
      t.url,
      apiKey,
      'query D($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { url } }',
      { ids: [mediaId] },
    );
    const signed = new URL(data.getDownloadUrls[0]!.url);
    const found = await t.app.services.media.resolveDownload(
      mediaId,
      signed.searchParams.get('exp') ?? undefined,
      signed.searchParams.get('sig') ?? undefined,
    );
    assert.ok(found !== null && 'path' in found);
    // The stored file became something the server cannot send: its fault, not the client's.
    rmSync(found.path);
    mkdirSync(found.path);

    const res = await fetch(signed, { headers: { 'x-request-id': 'broken-download-1' } });
    await assertCatalogueAnswer(res, '190000', 'unreadable media file');
    const logged = t
      .logs()
      .split('\n')
      .filter((line) => line.includes('"reqId":"broken-download-1"') && line.includes('"err"'));
    assert.equal(logged.length, 1, logged.join('\n'));
  });
});
