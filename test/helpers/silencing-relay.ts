import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './net.ts';

/**
 * A TCP relay to PostgreSQL that can make the sessions that ran `LISTEN <channel>` go silent:
 * their bytes are dropped both ways and their sockets stay open, as on a dropped route — no
 * error, no end, nothing for the client to notice but silence.
 */
export class SilencingRelay {
  readonly url: string;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #listening = new Set<{ silent: boolean }>();

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async start(target: string, channel: string): Promise<SilencingRelay> {
    const upstreamUrl = new URL(target);
    const port = await freePort();
    let relay: SilencingRelay | undefined;
    const server = createServer((client) => {
      const upstream = createConnection(Number(upstreamUrl.port || 5432), upstreamUrl.hostname);
      const state = { silent: false };
      for (const socket of [client, upstream]) {
        relay!.#sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          relay!.#sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => {
        if (chunk.includes(`LISTEN ${channel}`)) relay!.#listening.add(state);
        if (!state.silent) upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!state.silent) client.write(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const url = new URL(target);
    url.host = `127.0.0.1:${port}`;
    relay = new SilencingRelay(server, url.toString());
    return relay;
  }

  /** Silences every session that is listening now (later ones are relayed as usual). */
  silenceListeners(): number {
    for (const state of this.#listening) state.silent = true;
    const count = this.#listening.size;
    this.#listening.clear();
    return count;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
