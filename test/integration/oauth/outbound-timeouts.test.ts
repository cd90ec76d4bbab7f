import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { generate } from 'selfsigned';
import { remoteIssuerKeys } from '../../../src/auth/issuer-keys.ts';
import { ClientMetadataDocuments } from '../../../src/auth/oauth/client-metadata-documents.ts';
import { AppError, ErrorCode } from '../../../src/shared/errors.ts';
import { S3MediaStorage } from '../../../src/storage/s3-media-storage.ts';
import { openDatabase } from '../../../src/store/database.ts';
import { freePort } from '../../helpers/net.ts';

// Every outbound request Atelier makes is bounded in time: a server that never answers, or one
// that drips its answer a byte at a time, costs a request its timeout, not a hung worker.

/** Answers `/silent` never and `/drip` one byte every 100 ms, forever. */
function slowHandler(
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
) {
  if (req.url?.startsWith('/drip')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => res.write(' '), 100);
    res.on('close', () => clearInterval(timer));
  }
  // Anything else: headers never come.
}

const servers: Server[] = [];
let httpsBase: string;
let ca: string;
let httpBase: string;
before(async () => {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
  });
  ca = pems.cert;
  const secure = createHttpsServer({ key: pems.private, cert: pems.cert }, slowHandler);
  const plain = createHttpServer(slowHandler);
  const [securePort, plainPort] = [await freePort(), await freePort()];
  await new Promise<void>((resolve) => secure.listen(securePort, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => plain.listen(plainPort, '127.0.0.1', resolve));
  servers.push(secure, plain);
  httpsBase = `https://localhost:${securePort}`;
  httpBase = `http://127.0.0.1:${plainPort}`;
});
after(() => {
  for (const server of servers) server.closeAllConnections();
  for (const server of servers) server.close();
});

async function elapsed(work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const start = performance.now();
  try {
    await work();
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
  assert.fail('the request succeeded');
}

describe('outbound timeouts', () => {
  const documents = () =>
    new ClientMetadataDocuments({
      allowedHosts: '*',
      timeoutMs: 400,
      // The address filter stays on: the name resolves to a public address, dialled locally.
      resolveHost: async () => [{ address: '93.184.215.14', family: 4 }],
      dialAddress: () => '127.0.0.1',
      ca,
    });

  const manners = [
    ['silent', 'never answering'],
    ['drip', 'dripping its answer'],
  ] as const;
  const getKey = (keys: ReturnType<typeof remoteIssuerKeys>) => async () =>
    keys({ alg: 'RS256', kid: 'k' }, {} as never);

  for (const [path, manner] of manners) {
    it(`a Client ID Metadata Document host ${manner} is refused within the timeout`, async () => {
      const { ms, error } = await elapsed(() => documents().resolve(`${httpsBase}/${path}.json`));
      assert.match((error as Error).message, /timed out/);
      assert.ok(ms < 1_500, `took ${Math.round(ms)} ms`);
    });

    it(`an ID token issuer ${manner} to discovery is unavailable (100102) within the timeout`, async () => {
      const keys = remoteIssuerKeys({
        issuer: `${httpBase}/${path}`,
        jwksUri: null,
        timeoutMs: 400,
      });
      const { ms, error } = await elapsed(getKey(keys));
      assert.ok(error instanceof AppError);
      assert.equal(error.code, ErrorCode.IdentityUnavailable);
      assert.ok(ms < 1_500, `took ${Math.round(ms)} ms`);
    });
  }

  for (const [bucket, manner] of manners) {
    it(`an object store ${manner} fails a read and a write within its timeouts`, async () => {
      const storage = new S3MediaStorage(
        {
          bucket,
          region: 'us-east-1',
          endpoint: httpBase,
          forcePathStyle: true, // so /drip/… drips
          prefix: '',
          accessKeyId: 'key',
          secretAccessKey: 'secret',
          directUploads: true,
        },
        { connectMs: 300, idleMs: 300, requestMs: 400 },
      );
      try {
        for (const work of [
          () => storage.get('acc_1/med_1.png'),
          () => storage.put('acc_1/med_1.png', Buffer.from('bytes')),
        ]) {
          // The deadline (400 ms) over the whole operation, retries included.
          const { ms, error } = await elapsed(work);
          assert.match(
            `${(error as Error).name}: ${(error as Error).message}`,
            /AbortError|took too long|timed out/,
          );
          assert.ok(ms < 2_000, `took ${Math.round(ms)} ms`);
        }
      } finally {
        storage.close();
      }
    });
  }

  it('a PostgreSQL that accepts connections but never answers fails a query within the timeout', async (ctx) => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = createNetServer((socket) => sockets.add(socket)); // accepts, says nothing
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    const database = await openDatabase({
      backend: 'postgres',
      url: `postgres://atelier@127.0.0.1:${port}/atelier`,
      connectTimeoutMs: 400,
    });
    ctx.after(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await database.close();
    });
    const { ms } = await elapsed(async () => {
      if (!(await database.ping())) throw new Error('unreachable');
    });
    assert.ok(ms < 1_500, `took ${Math.round(ms)} ms`);
  });

  it('an issuer dripping its key set is unavailable (100102) within the timeout', async () => {
    const keys = remoteIssuerKeys({
      issuer: httpBase,
      jwksUri: `${httpBase}/drip`,
      timeoutMs: 400,
    });
    const { ms, error } = await elapsed(getKey(keys));
    assert.ok(error instanceof AppError);
    assert.equal(error.code, ErrorCode.IdentityUnavailable);
    assert.ok(ms < 1_500, `took ${Math.round(ms)} ms`);
  });
});
