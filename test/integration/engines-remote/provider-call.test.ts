import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Ffmpeg } from '../../../src/engines/media/ffmpeg.ts';
import { createRemoteDeps } from '../../../src/engines/remote/create-remote-deps.ts';
import {
  callProvider,
  ProviderUnreachableError,
} from '../../../src/engines/remote/provider-call.ts';
import { freePort } from '../../helpers/net.ts';
import { StandinServer } from '../../helpers/standins/standin-server.ts';

// callProvider against a real HTTP server on 127.0.0.1: a protocol stand-in that answers as a
// model server does (429 with Retry-After, 5xx, a request it never answers).

const calls: Array<{ backend: string; outcome: string }> = [];
const deps = createRemoteDeps({
  secrets: new Map(),
  ffmpeg: Ffmpeg.resolve(),
  observe: (backend, outcome) => calls.push({ backend, outcome }),
});
describe('callProvider (protocol stand-in of a model server)', () => {
  const standin = new StandinServer((_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  const post = (path: string, extra: Partial<Parameters<typeof callProvider>[1]> = {}) =>
    callProvider(deps, {
      backend: `test ${standin.url}`,
      url: `${standin.url}${path}`,
      init: {
        method: 'POST',
        headers: { authorization: 'Bearer k-1', 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'a lighthouse' }),
      },
      signal: new AbortController().signal,
      ...extra,
    });

  before(() => standin.listen());
  after(() => standin.close());

  it('waits as a 429 asks (Retry-After) and sends the same request again', async () => {
    calls.length = 0;
    const path = '/rate-limited';
    standin.failNext((r) => r.path === path, 1, {
      status: 429,
      headers: { 'retry-after': '0' },
      body: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}',
    });
    const response = await post(path);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { ok: true });
    const sent = standin.matching((r) => r.path === path);
    assert.equal(sent.length, 2);
    for (const request of sent) {
      assert.equal(request.headers.authorization, 'Bearer k-1');
      assert.deepEqual(request.json, { prompt: 'a lighthouse' });
    }
    assert.deepEqual(
      calls.map((c) => c.outcome),
      ['failed', 'ok'],
    );
    assert.equal(calls[0]!.backend, `test ${standin.url}`);
  });

  it('gives back the last 5xx after its attempts, and never retries a 400', async () => {
    standin.failNext((r) => r.path === '/down', 3, {
      status: 503,
      headers: { 'retry-after-ms': '1' },
    });
    const down = await post('/down', { maxAttempts: 3 });
    assert.equal(down.status, 503);
    assert.equal(standin.matching((r) => r.path === '/down').length, 3);

    standin.failNext((r) => r.path === '/refused', 1, { status: 400, body: '{}' });
    assert.equal((await post('/refused')).status, 400);
    assert.equal(standin.matching((r) => r.path === '/refused').length, 1);
  });

  it('obeys x-should-retry: false on a 5xx, and true on a 4xx', async () => {
    standin.failNext((r) => r.path === '/final', 1, {
      status: 502,
      headers: { 'x-should-retry': 'false' },
    });
    assert.equal((await post('/final')).status, 502);
    assert.equal(standin.matching((r) => r.path === '/final').length, 1);
    standin.failNext((r) => r.path === '/again', 1, {
      status: 400,
      headers: { 'x-should-retry': 'true' },
    });
    assert.equal((await post('/again')).status, 200);
    assert.equal(standin.matching((r) => r.path === '/again').length, 2);
  });

  it('a call with no answer in time fails as unreachable, the origin only in its detail', async () => {
    standin.hold((r) => r.path === '/silent');
    await assert.rejects(
      post('/silent', { callTimeoutMs: 200, maxAttempts: 1 }),
      (error: Error) => {
        assert.ok(error instanceof ProviderUnreachableError);
        // The message may reach a finish message: no model server's address in it.
        assert.equal(error.message, 'No answer after 1 attempt(s)');
        assert.equal(error.attempts, 1);
        assert.match(error.detail, /^http:\/\/127\.0\.0\.1:\d+: no complete answer within 200 ms$/);
        return true;
      },
    );
  });

  it('a server that is not there fails as unreachable after every attempt', async () => {
    const port = await freePort();
    const attempt = callProvider(deps, {
      backend: 'test nowhere',
      url: `http://127.0.0.1:${port}/v1/images/generations`,
      init: { method: 'POST', body: '{}' },
      signal: new AbortController().signal,
      maxAttempts: 2,
    });
    await assert.rejects(attempt, (error: Error) => {
      assert.ok(error instanceof ProviderUnreachableError);
      assert.equal(error.message, 'No answer after 2 attempt(s)');
      assert.match(error.detail, /ECONNREFUSED/);
      return true;
    });
  });
});

describe('callProvider aborted by its task', () => {
  it('closes the connection at once and rejects with the signal reason, without retrying', async () => {
    const { promise: closed, resolve: sawClose } = Promise.withResolvers<void>();
    const { promise: arrived, resolve: sawRequest } = Promise.withResolvers<void>();
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      res.on('close', () => sawClose());
      sawRequest();
      void req;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address() as { port: number };
      const controller = new AbortController();
      const call = callProvider(deps, {
        backend: 'test abort',
        url: `http://127.0.0.1:${address.port}/v1/audio/speech`,
        init: { method: 'POST', body: '{}' },
        signal: controller.signal,
      });
      await arrived;
      const reason = new Error('task cancelled');
      controller.abort(reason);
      await assert.rejects(call, (error) => error === reason);
      await closed;
      assert.equal(requests, 1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
