import pg from 'pg';

/** How a {@link PostgresChannel} publishes. */
export interface ChannelOptions {
  /**
   * Awaited when a statement is back and notifications wait for the next one, so that more of
   * a burst can join them (default: they go at once). A notification published while nothing
   * is on its way always goes at once: only a burst waits.
   */
  readonly gather?: () => Promise<void>;
}

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

/** Notifications sent in one statement at most (PostgreSQL's queue takes 8,000 bytes each). */
const maxBatch = 100;

interface Outgoing {
  readonly payload: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * One PostgreSQL LISTEN/NOTIFY channel: publishing is a NOTIFY through one pooled connection, and a
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
  readonly #gather: (() => Promise<void>) | undefined;
  readonly #outbox: Outgoing[] = [];
  #sending = false;
  #listener: pg.Client | undefined;
  #live = false;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  private constructor(
    url: string,
    channel: string,
    handlers: ChannelHandlers,
    options: ChannelOptions,
  ) {
    this.#url = url;
    this.#channel = channel;
    this.#handlers = handlers;
    this.#gather = options.gather;
    this.#publisher = new pg.Pool({ connectionString: url, max: 1 });
    this.#publisher.on('error', () => {});
  }

  /** Opens the channel; fails when the first LISTEN does (the database is not there). */
  static async open(
    url: string,
    channel: string,
    handlers: ChannelHandlers,
    options: ChannelOptions = {},
  ) {
    const opened = new PostgresChannel(url, channel, handlers, options);
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

  /**
   * Sends a notification; resolves once PostgreSQL has it. Notifications published while
   * another is on its way go together in the next statement, in order, once `gather` lets
   * them: under load, one round trip carries many (they were a fifth of the queue's round
   * trips). PostgreSQL delivers a payload repeated within one statement once, so payloads that
   * must each arrive must differ.
   */
  notify(payload: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#outbox.push({ payload, resolve, reject });
      if (this.#outbox.length === 1 && !this.#sending) void this.#send();
    });
  }

  async #send(): Promise<void> {
    this.#sending = true;
    while (this.#outbox.length > 0) {
      const batch = this.#outbox.splice(0, maxBatch);
      try {
        // Named: parsed once by the publishing connection, then only bound and run.
        await this.#publisher.query({
          name: 'atelier_notify',
          text: 'SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS u(p, n) ORDER BY n',
          values: [this.#channel, batch.map((n) => n.payload)],
        });
        for (const n of batch) n.resolve();
      } catch (error) {
        for (const n of batch) n.reject(error);
      }
      if (this.#outbox.length > 0 && this.#outbox.length < maxBatch) await this.#gather?.();
    }
    this.#sending = false;
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
