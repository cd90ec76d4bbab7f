import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, describe, it } from 'node:test';
import { Ffmpeg } from '../../../src/engines/media/ffmpeg.ts';
import { createRemoteDeps } from '../../../src/engines/remote/create-remote-deps.ts';
import {
  CreateUnanswered,
  sendCreate,
} from '../../../src/engines/replicate/replicate-create-call.ts';
import { freePort } from '../../helpers/net.ts';

// A Replicate create is sent again only when it surely made nothing (review 17): a refused
// connection is retried; a request Replicate received and then lost the answer to is not.
// Real HTTP on 127.0.0.1; the servers here are minimal protocol stand-ins for Replicate's
// create endpoint.

const servers: Server[] = [];
after(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(port: number, handle: Parameters<typeof createServer>[1]): Promise<void> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
}

const depsObserving = (onFailed: () => void) =>
  createRemoteDeps({
    secrets: new Map(),
    ffmpeg: Ffmpeg.resolve(),
    observe: (_backend, outcome) => {
      if (outcome === 'failed') onFailed();
    },
  });

const create = (deps: ReturnType<typeof createRemoteDeps>, port: number) =>
  sendCreate(deps, {
    backend: 'replicate test',
    url: `http://127.0.0.1:${port}/v1/models/a/b/predictions`,
    init: { method: 'POST', body: JSON.stringify({ input: { prompt: 'once' } }) },
    signal: new AbortController().signal,
  });

describe('sendCreate: when a Replicate create is sent again', () => {
  it('a refused connection is tried again, and reaches the server once it is up', async () => {
    const port = await freePort();
    let received = 0;
    let up: Promise<void> | undefined;
    // Nothing listens at first; the server comes up when the first attempt has been refused.
    const deps = depsObserving(() => {
      up ??= serve(port, (_req, res) => {
        received += 1;
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{"id":"p1"}');
      });
    });
    const response = await create(deps, port);
    await up;
    assert.equal(response.status, 201);
    assert.equal(received, 1);
  });

  it('a connection reset after the request arrived is not sent again', async () => {
    const port = await freePort();
    let received = 0;
    await serve(port, (req) => {
      received += 1;
      req.socket.destroy(); // Replicate may have made the prediction; its answer is lost
    });
    await assert.rejects(
      create(
        depsObserving(() => {}),
        port,
      ),
      (error: Error) => {
        assert.ok(error instanceof CreateUnanswered);
        assert.equal(error.message.includes('127.0.0.1'), false, 'no address shown to users');
        assert.ok(error.detail.includes(`127.0.0.1:${port}`), 'the log has it');
        return true;
      },
    );
    assert.equal(received, 1, 'one create only');
  });
});
