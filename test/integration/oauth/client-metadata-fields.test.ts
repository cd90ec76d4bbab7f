import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { documentHost, redirectUri, startAuthorization } from '../../helpers/metadata-documents.ts';

// A document is a client only if every field it sets can be honoured; a wrong field refuses it
// (on Atelier's error page: its redirect URIs are not trusted yet) and nothing is stored.
const client = (self: string, extra: Record<string, unknown>) => ({
  client_id: self,
  client_name: 'Agent',
  redirect_uris: [redirectUri],
  ...extra,
});

const refusals: [string, (self: string) => unknown, RegExp][] = [
  ['that is null', () => null, /is not a JSON object/],
  ['that is an array', (self) => [client(self, {})], /is not a JSON object/],
  ['that is a string', (self) => self, /is not a JSON object/],
  ['that is a number', () => 42, /is not a JSON object/],
  [
    'holding a client_secret',
    (self) => client(self, { client_secret: 's3cret' }),
    /holds a client_secret/,
  ],
  [
    'holding a client_secret_expires_at',
    (self) => client(self, { client_secret_expires_at: 0 }),
    /holds a client_secret_expires_at/,
  ],
  [
    'asking for token_endpoint_auth_method private_key_jwt',
    (self) => client(self, { token_endpoint_auth_method: 'private_key_jwt' }),
    /token_endpoint_auth_method private_key_jwt; only public clients/,
  ],
  [
    'asking for token_endpoint_auth_method null',
    (self) => client(self, { token_endpoint_auth_method: null }),
    /token_endpoint_auth_method null/,
  ],
  [
    'with an http logo_uri',
    (self) => client(self, { logo_uri: 'http://agent.example/logo.png' }),
    /logo_uri that is not an https URL on a public host/,
  ],
  [
    'with a logo_uri on localhost',
    (self) => client(self, { logo_uri: 'https://localhost/logo.png' }),
    /logo_uri/,
  ],
  [
    'with a logo_uri on a private address',
    (self) => client(self, { logo_uri: 'https://10.0.0.1/logo.png' }),
    /logo_uri/,
  ],
  [
    'with a client_uri on an IPv6 loopback',
    (self) => client(self, { client_uri: 'https://[::1]/' }),
    /client_uri that is not an https URL on a public host/,
  ],
  [
    'with a client_uri that is no URL',
    (self) => client(self, { client_uri: 'agent.example' }),
    /client_uri/,
  ],
  [
    'with a javascript: client_uri',
    (self) => client(self, { client_uri: 'javascript:alert(1)' }),
    /client_uri/,
  ],
  [
    'with a jwks_uri on a single-label host',
    (self) => client(self, { jwks_uri: 'https://intranet/jwks.json' }),
    /jwks_uri that is not an https URL on a public host/,
  ],
  [
    'with an http jwks_uri',
    (self) => client(self, { jwks_uri: 'http://agent.example/jwks.json' }),
    /jwks_uri/,
  ],
  ...(
    [
      ['a javascript: redirect URI', 'javascript:alert(1)', /scheme javascript:/],
      ['a data: redirect URI', 'data:text/html,hi', /scheme data:/],
      ['a file: redirect URI', 'file:///etc/passwd', /scheme file:/],
      ['a plain-http redirect URI to another host', 'http://agent.example/cb', /plain http/],
      ['a redirect URI with a fragment', 'https://agent.example/cb#x', /with a fragment/],
      ['a redirect URI with credentials', 'https://u:p@agent.example/cb', /with credentials/],
    ] as const
  ).map(([label, uri, reason]): [string, (self: string) => unknown, RegExp] => [
    `with ${label}`,
    (self) => client(self, { redirect_uris: [redirectUri, uri] }),
    reason,
  ]),
];

describeEachBackend('Client ID Metadata Document fields', (backend) => {
  let database: Database;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    host = await documentHost();
    for (const [i, [, document]] of refusals.entries())
      host.serveJson(`/refused-${i}.json`, document);
    host.serveJson('/full.json', (self) =>
      client(self, {
        client_uri: 'https://agent.example/',
        logo_uri: 'https://cdn.agent.example/logo.png',
        jwks_uri: 'https://agent.example/jwks.json',
        token_endpoint_auth_method: 'none',
        // Web, loopback and native-app callbacks (RFC 8252 §7) are all fine.
        redirect_uris: [
          redirectUri,
          'https://agent.example/oauth/callback',
          'http://127.0.0.1/callback',
          'http://[::1]:8765/callback',
          'com.example.agent:/oauth/callback',
        ],
      }),
    );
    t = await startTestApp(database, { cimdFetch: host.publicNetwork });
  });
  after(async () => {
    await t.close();
    await host.close();
    await database.close();
  });

  const sessions = async () =>
    (
      await database.db
        .selectFrom('browser_sessions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n;

  for (const [i, [label, , reason]] of refusals.entries()) {
    it(`refuses a document ${label}, and stores nothing`, async () => {
      const before = await sessions();
      const res = await startAuthorization(t, `${host.base}/refused-${i}.json`);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null, 'never redirected');
      assert.equal(res.headers.get('set-cookie'), null, 'no session');
      const page = await res.text();
      assert.match(page, /The client(&#39;|')s metadata document/);
      assert.match(page, reason);
      assert.equal(Number(await sessions()), Number(before));
    });
  }

  it('accepts a public client whose URLs are https on public hosts, with any callback kind', async () => {
    const res = await startAuthorization(t, `${host.base}/full.json`);
    assert.equal(res.status, 303, await res.text());
    assert.match(res.headers.get('location') ?? '', /\/login/);
  });
});
