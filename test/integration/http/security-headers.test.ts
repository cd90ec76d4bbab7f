import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';

// Headers do not depend on the database; PGlite is enough here.
let database: Database;
let plain: TestApp;
let behindTls: TestApp;
let behindProxy: TestApp;
before(async () => {
  database = await createTestDatabase('pglite');
  plain = await startTestApp(database);
  // TLS ends at a proxy; this listener is plain HTTP, the public URL is https.
  behindTls = await startTestApp(database, { env: { PUBLIC_URL: 'https://atelier.example.com' } });
  behindProxy = await startTestApp(database, { env: { TRUST_PROXY: '1' } });
});
after(async () => {
  await plain.close();
  await behindTls.close();
  await behindProxy.close();
  await database.close();
});

const everywhere = [
  ['GET', '/healthz'],
  ['POST', '/graphql'],
  ['GET', '/mcp'],
  ['GET', '/.well-known/oauth-authorization-server'],
  ['GET', '/media/med_unknown'],
  ['GET', '/no-such-route'],
] as const;

async function headersOf(base: string, method: string, path: string): Promise<Headers> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: JSON.stringify({ query: '{ __typename }' }) } : {}),
  });
  await res.arrayBuffer();
  return res.headers;
}

describe('security headers', () => {
  it('every API response is never sniffed, never framed, sends no referrer and allows no content', async () => {
    for (const [method, path] of everywhere) {
      const h = await headersOf(plain.url, method, path);
      const where = `${method} ${path}`;
      assert.equal(h.get('x-content-type-options'), 'nosniff', where);
      assert.equal(h.get('x-frame-options'), 'DENY', where);
      assert.equal(h.get('referrer-policy'), 'no-referrer', where);
      assert.equal(
        h.get('content-security-policy'),
        "default-src 'none'; frame-ancestors 'none'",
        where,
      );
    }
  });

  it('pages carry their own policy: scripts from this origin only, never framed', async () => {
    const h = await headersOf(plain.url, 'GET', '/login');
    const csp = h.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  });

  it('HSTS only when the public URL is https, on every response', async () => {
    for (const [method, path] of everywhere) {
      assert.equal(
        (await headersOf(plain.url, method, path)).get('strict-transport-security'),
        null,
      );
      assert.equal(
        (await headersOf(behindTls.url, method, path)).get('strict-transport-security'),
        'max-age=63072000; includeSubDomains',
        `${method} ${path}`,
      );
    }
    const page = await headersOf(behindTls.url, 'GET', '/login');
    assert.match(page.get('strict-transport-security') ?? '', /^max-age=63072000/);
  });
});

describe('the client address', () => {
  const forged = { 'x-forwarded-for': '203.0.113.7' };
  it('ignores X-Forwarded-For unless TRUST_PROXY says whose to believe', async () => {
    await (await fetch(`${plain.url}/healthz?probe=plain`, { headers: forged })).arrayBuffer();
    const line =
      plain
        .logs()
        .split('\n')
        .find((l) => l.includes('probe=plain')) ?? '';
    assert.match(line, /"remoteAddress":"127\.0\.0\.1"/);
    assert.doesNotMatch(plain.logs(), /203\.0\.113\.7/);

    await (
      await fetch(`${behindProxy.url}/healthz?probe=proxy`, { headers: forged })
    ).arrayBuffer();
    const proxied =
      behindProxy
        .logs()
        .split('\n')
        .find((l) => l.includes('probe=proxy')) ?? '';
    assert.match(proxied, /"remoteAddress":"203\.0\.113\.7"/);
  });
});
