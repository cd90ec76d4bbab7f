import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../src/shared/clock.ts';

/** One request a receiver got: its headers and its body as sent. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook endpoint on 127.0.0.1: records every request and answers with the next status of
 * `answers` (then 200), or holds the request open while `hold` is true. `received(n)` resolves
 * once n requests have arrived: a signal to wait for, not a sleep.
 */
export async function startWebhookReceiver() {
  const requests: ReceivedWebhook[] = [];
  const waiting = new Set<() => void>();
  const answers: number[] = [];
  const state = { hold: false };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const check of waiting) check();
      if (state.hold) return; // never answered: the sender's deadline or death ends it
      res.statusCode = answers.shift() ?? 200;
      res.end(res.statusCode < 300 ? 'ok' : 'receiver is down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const received = (count: number, timeoutMs = 15_000) =>
    new Promise<ReceivedWebhook[]>((resolve, reject) => {
      if (requests.length >= count) return resolve(requests);
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`${requests.length} of ${count} webhook requests arrived`));
      }, timeoutMs);
      const check = () => {
        if (requests.length < count) return;
        clearTimeout(timer);
        waiting.delete(check);
        resolve(requests);
      };
      waiting.add(check);
    });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    answers,
    state,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

/** Standard Webhooks' tolerance for a message's timestamp. */
const timestampToleranceSeconds = 5 * 60;

/**
 * The JSON body of a Standard Webhooks request, verified as the `standardwebhooks` library
 * does (its own signing, every `v1` signature of the header tried), with the timestamp judged
 * on the sender's clock: Atelier stamps it with its clock port, a test clock years from the
 * machine's, which `Webhook.verify` would compare with the real time. Throws when it fails.
 */
export function verifyWebhook(secret: string, request: ReceivedWebhook, clock: Clock): unknown {
  const id = request.headers['webhook-id'];
  const stamp = request.headers['webhook-timestamp'];
  const signatures = request.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof stamp !== 'string' || typeof signatures !== 'string') {
    throw new Error('Missing required headers');
  }
  const seconds = Number(stamp);
  if (Math.abs(clock.now().getTime() / 1000 - seconds) > timestampToleranceSeconds) {
    throw new Error(`Message timestamp ${stamp} is not within 5 minutes of the sender's clock`);
  }
  const expected = new Webhook(secret).sign(id, new Date(seconds * 1000), request.body);
  if (!signatures.split(' ').includes(expected)) throw new Error('No matching signature found');
  return JSON.parse(request.body);
}
