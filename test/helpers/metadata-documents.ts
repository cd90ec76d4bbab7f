import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { TestApp } from './app.ts';
import { freePort } from './net.ts';
import { authorizeUrl } from './oauth-flow.ts';

/** The redirect URI the test documents' clients use. */
export const redirectUri = 'http://localhost:41234/oauth/callback';

/** A server's TLS certificate and its key (PEM). */
export interface TlsIdentity {
  key: string;
  cert: string;
}

/** A self-signed certificate for the names documentHost serves by default. */
async function selfSignedIdentity(): Promise<TlsIdentity> {
  // *.agent.example: names that tests resolve to public addresses through the CIMD DNS port.
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: '*.agent.example' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/**
 * An HTTPS host serving client metadata documents, as an agent's website would, on 127.0.0.1
 * (and on [::1] at the same port with `ipv6`); by default with a self-signed certificate of
 * its own, else with `identity`.
 */
export async function documentHost(identity?: TlsIdentity, { ipv6 = false } = {}) {
  const port = await freePort();
  const base = `https://localhost:${port}`;
  const pems = identity ?? (await selfSignedIdentity());
  const hits = new Map<string, number>();
  const documents: Record<string, (res: ServerResponse, self: string) => void> = {
    // Names the URL it was fetched from, whichever host name that used.
    '/good.json': (res, self) => {
      res.setHeader('cache-control', 'max-age=60');
      res.end(
        JSON.stringify({
          client_id: self,
          client_name: 'Good Agent',
          client_uri: 'https://agent.example',
          redirect_uris: ['http://localhost/oauth/callback'],
          token_endpoint_auth_method: 'none',
        }),
      );
    },
    '/liar.json': (res) =>
      res.end(
        JSON.stringify({
          client_id: 'https://trusted.example/client.json',
          client_name: 'Liar',
          redirect_uris: [redirectUri],
        }),
      ),
    '/redirect.json': (res) => {
      res.statusCode = 302;
      res.setHeader('location', `${base}/good.json`);
      res.end();
    },
    '/big.json': (res) =>
      res.end(
        JSON.stringify({
          client_id: `${base}/big.json`,
          redirect_uris: [redirectUri],
          padding: 'x'.repeat(20_000),
        }),
      ),
    '/secret-client.json': (res) =>
      res.end(
        JSON.stringify({
          client_id: `${base}/secret-client.json`,
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: 'client_secret_basic',
        }),
      ),
    '/no-redirects.json': (res) =>
      res.end(JSON.stringify({ client_id: `${base}/no-redirects.json` })),
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
    const host = req.headers.host!;
    hits.set(`${host}${req.url}`, (hits.get(`${host}${req.url}`) ?? 0) + 1);
    const serve = documents[req.url!];
    if (serve === undefined) {
      res.statusCode = 404;
      res.end();
    } else {
      res.setHeader('content-type', 'application/json');
      serve(res, `https://${host}${req.url}`);
    }
  };
  const servers: Server[] = [];
  for (const address of ipv6 ? ['127.0.0.1', '::1'] : ['127.0.0.1']) {
    const server = createServer(pems, handle);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(port, address, resolve));
  }
  /** Serves `path` with `handler`, given the URL the request was made for. */
  const serve = (path: string, handler: (res: ServerResponse, self: string) => void) => {
    documents[path] = handler;
  };
  /** Serves at `path` the JSON of what `document` gives for the URL it was fetched from. */
  const serveJson = (path: string, document: (self: string) => unknown) =>
    serve(path, (res, self) => res.end(JSON.stringify(document(self))));
  /**
   * CIMD fetch overrides that keep the production address filter on: every name resolves to a
   * public address (as a client's website would), and the address that passed is dialled here.
   */
  const publicNetwork = {
    ca: pems.cert,
    resolveHost: async () => [{ address: '93.184.215.14', family: 4 }],
    dialAddress: () => '127.0.0.1',
  };
  return {
    base,
    port,
    ca: pems.cert,
    publicNetwork,
    hits,
    serve,
    serveJson,
    close: () => Promise.all(servers.map((server) => new Promise((r) => server.close(r)))),
  };
}

/**
 * A certificate authority of the test's own, as a developer makes one with mkcert: its
 * certificate in a file (what OAUTH_CIMD_DEV_CA names), and a server certificate it issued for
 * this computer's names (localhost, 127.0.0.1, ::1). `close` removes the file.
 */
export async function localCertificateAuthority() {
  const ca = await generate([{ name: 'commonName', value: 'Atelier test development CA' }], {
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: 'localhost' }], {
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'atelier-dev-ca-'));
  const caFile = path.join(dir, 'rootCA.pem');
  writeFileSync(caFile, ca.cert);
  return {
    caFile,
    server: { key: server.private, cert: server.cert } satisfies TlsIdentity,
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `GET /oauth/authorize` for `clientId`, as a browser would open it; redirects not followed. */
export function startAuthorization(app: TestApp, clientId: string): Promise<Response> {
  return fetch(
    authorizeUrl(app.url, {
      clientId,
      redirectUri,
      pkce: { verifier: '', challenge: 'A'.repeat(43), state: 's' },
    }),
    { redirect: 'manual' },
  );
}
