import pg from 'pg';

/** What a {@link PostgresChannel} tells its owner. */
export interface ChannelHandlers {
  /** A NOTIFY on the channel, from any process (this one included). */
  message(payload: string): void;
  /** Delivery stopped (the LISTEN connection is gone) or resumed (listening again). */
  liveness?(live: boolean): void;
}

/**
 * How often the listening connection proves it is alive with a query, and how long that query
 * may take. A connection that dies without a reset (a dropped route, a frozen server) sends
 * no error; TCP keep-alive would notice only after minutes, and meanwhile `live` would lie.
 */
const heartbeatMs = 5_000; // 5 seconds

/**
 * One PostgreSQL LISTEN/NOTIFY channel: publishing is a NOTIFY through a small pool, and a
 * dedicated connection LISTENs. A lost listener — an error, an end, or a heartbeat that does
 * not come back — is reopened every second until it is back; while it is away `live` is false,
 * because notifications sent meanwhile are lost for good (PostgreSQL does not replay them) and
 * a consumer may need to stop trusting what they would have corrected.
 */
export class PostgresChannel {
  readonly #url: string;
  readonly #channel: string;
  readonly #handlers: ChannelHandlers;
  readonly #publisher: pg.Pool;
  #listener: pg.Client | undefined;
  #live = false;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  private constructor(url: string, channel: string, handlers: ChannelHandlers) {
    this.#url = url;
    this.#channel = channel;
    this.#handlers = handlers;
    this.#publisher = new pg.Pool({ connectionString: url, max: 2 });
    this.#publisher.on('error', () => {});
  }

  /** Opens the channel; fails when the first LISTEN does (the database is not there). */
  static async open(url: string, channel: string, handlers: ChannelHandlers) {
    const opened = new PostgresChannel(url, channel, handlers);
    try {
      await opened.#listen();
    } catch (error) {
      await opened.close();
      throw error;
    }
    return opened;
  }

  /** Whether this process is listening right now. */
  get live(): boolean {
    return this.#live;
  }

  async notify(payload: string): Promise<void> {
    await this.#publisher.query('SELECT pg_notify($1, $2)', [this.#channel, payload]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#heartbeat);
    this.#setLive(false);
    await this.#listener?.end().catch(() => {});
    await this.#publisher.end();
  }

  async #listen(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#url,
      keepAlive: true,
      query_timeout: heartbeatMs,
    });
    client.on('notification', (message) => {
      if (message.channel === this.#channel && message.payload !== undefined)
        this.#handlers.message(message.payload);
    });
    const lost = () => {
      if (this.#listener === client) {
        this.#listener = undefined;
        clearInterval(this.#heartbeat);
        this.#setLive(false);
        // A silent connection would never end by itself: let go of it (not awaited, it may hang).
        client.end().catch(() => {});
      }
      this.#reconnectSoon();
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#listener = client;
    this.#heartbeat = setInterval(() => {
      client.query('SELECT 1').catch(lost);
    }, heartbeatMs);
    this.#setLive(true);
  }

  #setLive(live: boolean): void {
    if (this.#live === live) return;
    this.#live = live;
    this.#handlers.liveness?.(live);
  }

  #reconnectSoon(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#listen().catch(() => this.#reconnectSoon());
    }, 1_000); // 1 second
  }
}
