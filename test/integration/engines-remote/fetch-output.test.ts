import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { generate } from 'selfsigned';
import { Ffmpeg } from '../../../src/engines/media/ffmpeg.ts';
import { createRemoteDeps } from '../../../src/engines/remote/create-remote-deps.ts';
import { RemoteOutputError } from '../../../src/engines/remote/remote-deps.ts';

// Output URLs a provider returns are fetched only from its own origin or from public https
// hosts, through the CIMD address filter. The public host here is a local HTTPS server that
// test DNS answers for with a public address; the checked address is dialled as 127.0.0.1.

const png = Buffer.from('89504e470d0a1a0a', 'hex');
const serve = (res: import('node:http').ServerResponse, url: string | undefined) => {
  if (url === '/stalled.png') {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': '4096' });
    res.write(Buffer.alloc(16)); // and nothing more, until the client gives up
    return;
  }
  if (url === '/big') {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(Buffer.alloc(4096));
    return;
  }
  res.writeHead(200, { 'content-type': 'image/png' });
  res.end(png);
};

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('fetchOutput: where a provider output may come from', () => {
  /** The Authorization header each server saw, by path. */
  const seen = new Map<string, string | undefined>();
  const provider = createHttpServer((req, res) => {
    seen.set(`provider ${req.url}`, req.headers.authorization);
    serve(res, req.url);
  });
  let cdn: Server;
  let providerOrigin = '';
  let cdnPort = 0;
  let deps: ReturnType<typeof createRemoteDeps>;
  const options = (maxBytes = 1024) => ({
    providerOrigin,
    maxBytes,
    signal: new AbortController().signal,
  });

  before(async () => {
    const pems = await generate([{ name: 'commonName', value: 'cdn.provider.example' }], {
      extensions: [
        { name: 'subjectAltName', altNames: [{ type: 2, value: '*.provider.example' }] },
      ],
    });
    cdn = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      seen.set(`cdn ${req.url}`, req.headers.authorization);
      serve(res, req.url);
    });
    providerOrigin = `http://127.0.0.1:${await listen(provider)}`;
    cdnPort = await listen(cdn);
    deps = createRemoteDeps({
      secrets: new Map(),
      ffmpeg: Ffmpeg.resolve(),
      observe: () => {},
      publicNetwork: {
        ca: pems.cert,
        resolveHost: async (host) =>
          host === 'inside.provider.example'
            ? [{ address: '10.0.0.7', family: 4 }]
            : [{ address: '93.184.215.14', family: 4 }],
        dialAddress: () => '127.0.0.1',
      },
    });
  });
  after(async () => {
    provider.closeAllConnections();
    cdn.closeAllConnections();
    await Promise.all([
      new Promise((resolve) => provider.close(resolve)),
      new Promise((resolve) => cdn.close(resolve)),
    ]);
  });

  it("fetches from the provider's own origin (plain http is the operator's choice)", async () => {
    const got = await deps.fetchOutput(`${providerOrigin}/files/1.png`, options());
    assert.deepEqual(got, { bytes: png, contentType: 'image/png' });
  });

  it('sends the provider’s credential to its own origin only, never to another host', async () => {
    const withToken = { ...options(), providerAuthorization: 'Bearer r8_provider-token' };
    await deps.fetchOutput(`${providerOrigin}/files/own.png`, withToken);
    await deps.fetchOutput(`https://cdn.provider.example:${cdnPort}/elsewhere.png`, withToken);
    assert.equal(seen.get('provider /files/own.png'), 'Bearer r8_provider-token');
    assert.equal(seen.has('cdn /elsewhere.png'), true);
    assert.equal(seen.get('cdn /elsewhere.png'), undefined);
  });

  it('fetches from a public https host whose addresses are all public', async () => {
    const got = await deps.fetchOutput(`https://cdn.provider.example:${cdnPort}/o.png`, options());
    assert.deepEqual(got.bytes, png);
  });

  it('refuses plain http elsewhere, private and local hosts, and names why', async () => {
    const refusals: Array<[string, RegExp]> = [
      [`http://cdn.provider.example:${cdnPort}/o.png`, /http: is not https/],
      ['https://127.0.0.1/o.png', /private address \(127\.0\.0\.1: loopback\)/],
      ['https://[::1]/o.png', /private address/],
      ['https://localhost/o.png', /localhost is not a public host/],
      ['https://metadata/o.png', /metadata is not a public host/],
      [
        `https://inside.provider.example:${cdnPort}/o.png`,
        /resolves to a private address \(\S+: private\)/,
      ],
      ['file:///etc/passwd', /file: is not https/],
      ['not a url', /not a URL/],
    ];
    for (const [url, reason] of refusals) {
      await assert.rejects(deps.fetchOutput(url, options()), (error: Error) => {
        assert.ok(error instanceof RemoteOutputError, url);
        assert.match(error.message, reason, url);
        return true;
      });
    }
  });

  it('refuses an output larger than the cap', async () => {
    await assert.rejects(
      deps.fetchOutput(`${providerOrigin}/big`, options(1000)),
      /could not be fetched \(larger than 1000 bytes\)/,
    );
  });

  // The engine's own deadline governs (Replicate's outputTimeoutMs goes up to an hour), not a
  // fixed one of the kit's: a short one here, so the test ends when it is honoured.
  it("gives up a stalled download at the caller's timeoutMs", { timeout: 30_000 }, async () => {
    await assert.rejects(
      deps.fetchOutput(`${providerOrigin}/stalled.png`, { ...options(8192), timeoutMs: 200 }),
      (error: Error) => error instanceof RemoteOutputError && /timed out/.test(error.message),
    );
  });

  it('stops when the task is aborted, with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('task cancelled');
    controller.abort(reason);
    await assert.rejects(
      deps.fetchOutput(`${providerOrigin}/x.png`, { ...options(), signal: controller.signal }),
      (error) => error === reason,
    );
  });
});
