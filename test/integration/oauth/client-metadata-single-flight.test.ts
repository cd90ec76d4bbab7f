import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { documentHost, redirectUri, startAuthorization } from '../../helpers/metadata-documents.ts';

const concurrent = 8;

describeEachBackend('Client ID Metadata Documents, fetched once', (backend) => {
  let database: Database;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    host = await documentHost();
    t = await startTestApp(database, { cimdFetch: host.publicNetwork });
  });
  after(async () => {
    await t.close();
    await host.close();
    await database.close();
  });

  /** Resolves once the app's HTTP server has received `n` authorization requests. */
  const authorizeRequests = (n: number) =>
    new Promise<void>((resolve) => {
      let seen = 0;
      const count = (req: { url?: string }) => {
        if (!req.url?.startsWith('/oauth/authorize?') || ++seen < n) return;
        t.app.http.server.off('request', count);
        resolve();
      };
      t.app.http.server.on('request', count);
    });

  it(`${concurrent} concurrent authorizations for one uncached client_id make one fetch`, async () => {
    // The document is held until the app has all the requests (on code without single flight
    // each of them fetches meanwhile); it may be cached, so one arriving after it is served
    // finds it in the cache rather than fetching again.
    let held: ServerResponse | undefined;
    let firstFetch!: () => void;
    const fetched = new Promise<void>((resolve) => {
      firstFetch = resolve;
    });
    const document = (self: string) =>
      JSON.stringify({ client_id: self, client_name: 'Popular', redirect_uris: [redirectUri] });
    host.serve('/popular.json', (res, self) => {
      res.setHeader('cache-control', 'max-age=60');
      if (held !== undefined) return res.end(document(self));
      held = res;
      firstFetch();
    });
    const arrived = authorizeRequests(concurrent);
    const responses = Array.from({ length: concurrent }, () =>
      startAuthorization(t, `${host.base}/popular.json`),
    );
    await Promise.all([arrived, fetched]);
    held!.end(document(`${host.base}/popular.json`));
    for (const res of await Promise.all(responses)) {
      assert.equal(res.status, 303, await res.text());
      assert.match(res.headers.get('location') ?? '', /\/login/);
    }
    assert.equal(host.hits.get('/popular.json'), 1);
  });

  it('a shared failure reaches every waiting request, and the next one fetches again', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstFetch!: () => void;
    const fetched = new Promise<void>((resolve) => {
      firstFetch = resolve;
    });
    host.serve('/flaky.json', (res) => {
      res.statusCode = 503;
      firstFetch();
      void gate.then(() => res.end());
    });
    const arrived = authorizeRequests(concurrent);
    const responses = Array.from({ length: concurrent }, () =>
      startAuthorization(t, `${host.base}/flaky.json`),
    );
    await Promise.all([arrived, fetched]);
    release();
    for (const res of await Promise.all(responses)) {
      assert.equal(res.status, 400);
      assert.match(await res.text(), /cannot be fetched \(HTTP 503\)/);
    }
    const before = host.hits.get('/flaky.json') ?? 0;
    await (await startAuthorization(t, `${host.base}/flaky.json`)).text();
    assert.equal(host.hits.get('/flaky.json'), before + 1, 'the failure was not kept');
  });
});
