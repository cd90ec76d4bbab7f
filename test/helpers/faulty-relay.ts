import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './net.ts';

/** One relayed connection: its two sockets and the bytes held while the relay is stalled. */
interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly held: { toServer: Buffer[]; toClient: Buffer[] };
  /** Set by `dropReplyTo` or `stallReplyTo`: what happens to the server's next bytes. */
  nextReply: { readonly fate: 'drop' | 'stall'; readonly happened: () => void } | undefined;
}

/**
 * A TCP relay in front of PostgreSQL that plays the faults of a network and a server: a stall
 * (every byte held, both ways, connections open: a frozen server or a dropped route, with no
 * error for anyone to notice) and a lost reply (a statement reaches the server and runs, then
 * the connection dies before its answer gets back).
 */
export class FaultyRelay {
  readonly url: string;
  readonly #server: Server;
  readonly #links = new Set<Link>();
  #stalled = false;
  #armed: { pattern: string; fate: 'drop' | 'stall'; happened: () => void } | undefined;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async start(target: string): Promise<FaultyRelay> {
    const upstreamUrl = new URL(target);
    const port = await freePort();
    let relay: FaultyRelay | undefined;
    const server = createServer((client) => relay!.#link(client, upstreamUrl));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const url = new URL(target);
    url.host = `127.0.0.1:${port}`;
    relay = new FaultyRelay(server, url.toString());
    return relay;
  }

  #link(client: Socket, upstreamUrl: URL): void {
    const upstream = createConnection(Number(upstreamUrl.port || 5432), upstreamUrl.hostname);
    const link: Link = {
      client,
      upstream,
      held: { toServer: [], toClient: [] },
      nextReply: undefined,
    };
    this.#links.add(link);
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        this.#links.delete(link);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      const armed = this.#armed;
      if (armed !== undefined && chunk.includes(armed.pattern)) {
        this.#armed = undefined;
        link.nextReply = { fate: armed.fate, happened: armed.happened };
      }
      if (this.#stalled) link.held.toServer.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      const next = link.nextReply;
      link.nextReply = undefined;
      // The server has run (and, outside a transaction, committed) the statement; its answer
      // is lost with the connection, or held with everything after it.
      if (next?.fate === 'drop') {
        client.destroy();
        upstream.destroy();
        next.happened();
        return;
      }
      if (next?.fate === 'stall') {
        this.#stalled = true;
        next.happened();
      }
      if (this.#stalled) link.held.toClient.push(chunk);
      else client.write(chunk);
    });
  }

  /** Holds every byte, both ways, on every connection (new ones too), and closes none. */
  stall(): void {
    this.#stalled = true;
  }

  /** Passes what was held and relays as usual again. */
  resume(): void {
    this.#stalled = false;
    for (const link of this.#links) {
      for (const chunk of link.held.toServer.splice(0)) link.upstream.write(chunk);
      for (const chunk of link.held.toClient.splice(0)) link.client.write(chunk);
    }
  }

  /**
   * Arms the lost reply: the next message from a client that contains `pattern` reaches the
   * server, whose answer is then dropped with the connection. Resolves when that happened.
   */
  dropReplyTo(pattern: string): Promise<void> {
    return new Promise((resolve) => {
      this.#armed = { pattern, fate: 'drop', happened: resolve };
    });
  }

  /**
   * Arms a stall after the statement: the next message that contains `pattern` reaches the
   * server, and from its answer on every byte is held (`resume()` lets them through).
   */
  stallReplyTo(pattern: string): Promise<void> {
    return new Promise((resolve) => {
      this.#armed = { pattern, fate: 'stall', happened: resolve };
    });
  }

  async close(): Promise<void> {
    for (const link of this.#links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
