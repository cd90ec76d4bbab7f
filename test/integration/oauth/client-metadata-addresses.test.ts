import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { after, before, it } from 'node:test';
import { classifyAddress } from '../../../src/shared/public-address.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { documentHost, startAuthorization } from '../../helpers/metadata-documents.ts';

// The production address filter, with no override: a test DNS answers for *.agent.example,
// and an address that passed the check is dialled at the local document host instead — the
// check itself sees the public (or special) address, exactly as it would in production.
const dns: Record<string, string[]> = {
  'v4.agent.example': ['93.184.215.14'],
  'v6.agent.example': ['2606:4700:4700::1111'],
  'dual.agent.example': ['2606:4700:4700::1111', '1.1.1.1'],
  'mixed.agent.example': ['1.1.1.1', '10.0.0.7'],
  'mixed6.agent.example': ['2606:4700:4700::1111', 'fd00::7'],
  'loopback.agent.example': ['127.0.0.1'],
  'cgnat.agent.example': ['100.64.0.1'],
  'ietf.agent.example': ['192.0.0.8'],
  'bench.agent.example': ['198.18.0.1'],
  'doc.agent.example': ['203.0.113.5'],
  'broadcast.agent.example': ['255.255.255.255'],
  'metadata.agent.example': ['169.254.169.254'],
  'mapped.agent.example': ['::ffff:7f00:1'],
  'nat64.agent.example': ['64:ff9b::a00:1'],
  'nat64-local.agent.example': ['64:ff9b:1::a00:1'],
  '6to4.agent.example': ['2002:a00:1::1'],
  'teredo.agent.example': ['2001::1'],
  'ula.agent.example': ['fd12::1'],
  'link-local.agent.example': ['fe80::1'],
  'doc6.agent.example': ['2001:db8::1'],
};

describeEachBackend('the CIMD address filter as in production', (backend) => {
  let database: Database;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let t: TestApp;
  const dialled: string[] = [];
  before(async () => {
    database = await createTestDatabase(backend);
    host = await documentHost();
    t = await startTestApp(database, {
      cimdFetch: {
        ca: host.ca,
        resolveHost: async (hostname): Promise<LookupAddress[]> => {
          const addresses = dns[hostname];
          if (addresses === undefined) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          return addresses.map((address) => ({ address, family: isIP(address) }));
        },
        dialAddress: (checked) => {
          dialled.push(checked);
          return '127.0.0.1';
        },
      },
    });
  });
  after(async () => {
    await t.close();
    await host.close();
    await database.close();
  });

  it('fetches from hosts whose every address is public, IPv4 and IPv6', async () => {
    for (const name of ['v4', 'v6', 'dual']) {
      const clientId = `https://${name}.agent.example:${host.port}/good.json`;
      const res = await startAuthorization(t, clientId);
      // Accepted: on to sign-in.
      assert.equal(res.status, 303, `${name}: ${await res.text()}`);
      assert.match(res.headers.get('location') ?? '', /\/login/, name);
      assert.equal(host.hits.get(`${name}.agent.example:${host.port}/good.json`), 1, name);
    }
    assert.deepEqual(dialled.sort(), [
      '1.1.1.1',
      '2606:4700:4700::1111',
      '2606:4700:4700::1111',
      '93.184.215.14',
    ]);
  });

  it('refuses, before connecting, a host with any special address of either family', async () => {
    dialled.length = 0;
    const pages = new Set<string>();
    for (const [name, addresses] of [...Object.entries(dns), ['nowhere.agent.example', []]] as [
      string,
      string[],
    ][]) {
      if (['v4', 'v6', 'dual'].includes(name.split('.')[0]!)) continue;
      const clientId = `https://${name}:${host.port}/good.json`;
      const res = await startAuthorization(t, clientId);
      assert.equal(res.status, 400, name);
      assert.equal(res.headers.get('location'), null, name);
      const page = await res.text();
      // One wording for a private address and for a name that does not resolve: which one it
      // is would map this server's network for anyone who asks (issue 30 §3).
      assert.match(page, new RegExp(`${name.replaceAll('.', '\\.')} has no public address`), name);
      pages.add(page.replaceAll(name, 'NAME'));
      const special = addresses.at(-1);
      if (special !== undefined) {
        assert.ok(!page.includes(special), `${name}: does not show ${special}`);
        assert.ok(!page.includes(`(${classifyAddress(special).range})`), `${name}: nor its range`);
        // The operator's log says which.
        const logged = await t.logged(
          (e) => e.msg === 'authorization refused' && String(e.detail).startsWith(`${name} `),
        );
        assert.match(
          String(logged.detail),
          new RegExp(`resolves to a private address \\(${special.replaceAll('.', '\\.')}:`),
        );
      }
      assert.equal(host.hits.get(`${name}:${host.port}/good.json`), undefined, name);
    }
    assert.equal(pages.size, 1, [...pages].join('\n'));
    const unresolved = await t.logged(
      (e) => e.msg === 'authorization refused' && String(e.detail).startsWith('nowhere.'),
    );
    assert.match(String(unresolved.detail), /does not resolve/);
    assert.deepEqual(dialled, [], 'no socket was opened');
  });

  it('refuses special address literals of both families without a request', async () => {
    const before = host.hits.get('/good.json') ?? 0;
    for (const literal of [
      '127.0.0.1',
      '[::1]',
      '10.0.0.5',
      '169.254.169.254',
      '100.64.0.1',
      '192.0.0.8',
      '192.0.2.1',
      '198.18.0.1',
      '255.255.255.255',
      '0.0.0.0',
      '[::ffff:127.0.0.1]',
      '[::ffff:a00:1]',
      '[::127.0.0.1]',
      '[64:ff9b::a00:1]',
      '[64:ff9b:1::1]',
      '[2002:7f00:1::1]',
      '[2001::1]',
      '[fd00::1]',
      '[fe80::1]',
      '[2001:db8::1]',
    ]) {
      // Canonical spelling (::ffff:127.0.0.1 is written ::ffff:7f00:1), as a client_id must be.
      const clientId = new URL(`https://${literal}:${host.port}/good.json`).href;
      const res = await startAuthorization(t, clientId);
      assert.equal(res.status, 400, literal);
      assert.match(await res.text(), /points at a private address/, literal);
    }
    assert.equal(host.hits.get('/good.json') ?? 0, before, 'no request reached a server');
    assert.deepEqual(dialled, []);
  });

  it('real DNS too: localhost resolves to loopback and is refused', async () => {
    const strict = await startTestApp(database, { cimdFetch: { ca: host.ca } });
    try {
      const res = await startAuthorization(strict, `https://localhost:${host.port}/good.json`);
      assert.equal(res.status, 400);
      assert.match(await res.text(), /localhost has no public address/);
      assert.equal(host.hits.get(`localhost:${host.port}/good.json`), undefined);
    } finally {
      await strict.close();
    }
  });
});
