import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { documentHost, redirectUri, startAuthorization } from '../../helpers/metadata-documents.ts';

describeEachBackend('the Client ID Metadata Document cache', (backend) => {
  let database: Database;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let t: TestApp;
  const clock = new TestClock();
  before(async () => {
    database = await createTestDatabase(backend);
    host = await documentHost();
    for (const name of ['a', 'b', 'c', 'timed']) {
      host.serve(`/${name}.json`, (res, self) => {
        res.setHeader('cache-control', 'max-age=60');
        res.end(JSON.stringify({ client_id: self, redirect_uris: [redirectUri] }));
      });
    }
    t = await startTestApp(database, {
      clock,
      cimdFetch: { ...host.publicNetwork, maxCached: 2 },
    });
  });
  after(async () => {
    await t.close();
    await host.close();
    await database.close();
  });

  const authorize = async (name: string) => {
    const res = await startAuthorization(t, `${host.base}/${name}.json`);
    assert.equal(res.status, 303, await res.text());
  };

  it('keeps a document for its max-age on the clock, then fetches it again', async () => {
    await authorize('timed');
    clock.advance(59_000);
    await authorize('timed');
    assert.equal(host.hits.get('/timed.json'), 1);
    clock.advance(2_000);
    await authorize('timed');
    assert.equal(host.hits.get('/timed.json'), 2);
  });

  it('keeps a bounded number of documents: the oldest goes first', async () => {
    for (const name of ['a', 'b', 'c']) await authorize(name); // 'timed' and 'a' make way
    await authorize('c');
    await authorize('b');
    assert.deepEqual(
      ['a', 'b', 'c'].map((name) => host.hits.get(`/${name}.json`)),
      [1, 1, 1],
    );
    await authorize('a');
    assert.equal(host.hits.get('/a.json'), 2, 'a was forgotten');
  });
});
