import { createServer } from 'node:https';
import { generate } from 'selfsigned';
import { freePort } from './net.ts';

/**
 * An HTTPS host on localhost serving JSON documents by path, as an agent's website serves its
 * Client ID Metadata Document. `documents` receives the host's base URL, so a document can name
 * its own address. The app under test reaches it with `cimdFetch: { allowPrivateAddresses: true,
 * ca }`.
 */
export async function documentHost(documents: (base: string) => Record<string, unknown>) {
  const port = await freePort();
  const base = `https://localhost:${port}`;
  const served = documents(base);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
  });
  const hits = new Map<string, number>();
  const server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
    const document = served[req.url!];
    res.statusCode = document === undefined ? 404 : 200;
    res.setHeader('content-type', 'application/json');
    res.end(document === undefined ? '' : JSON.stringify(document));
  });
  await new Promise<void>((resolve) => server.listen(port, 'localhost', resolve));
  return {
    base,
    ca: pems.cert,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
