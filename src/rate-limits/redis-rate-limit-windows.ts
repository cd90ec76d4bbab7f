import { Redis } from 'ioredis';
import type { RedisConfig } from '../config/deployment.ts';
import type { Logger } from '../shared/logger.ts';
import type { WindowHit } from '../store/rate-limit.store.ts';

/** How long a count may take before the request goes on uncounted. */
const commandTimeoutMs = 500;
/** How long start-up waits for Redis before serving without it (it keeps reconnecting). */
const connectWaitMs = 2_000;

/**
 * One count of ARGV[2] hits (0 reads): create the window's key at 0 with the window's lifetime
 * unless it exists, add, and read what is left of the window. A script runs whole, without other clients' commands
 * in between, so two nodes counting the same key never start two windows.
 */
const hitScript = `
redis.call('SET', KEYS[1], 0, 'PX', ARGV[1], 'NX')
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
return { hits, redis.call('PTTL', KEYS[1]) }`;

/** The client with the script defined as a command (sent as EVALSHA once Redis knows it). */
type RedisWithHit = Redis & {
  rateLimitHit(key: string, windowMs: number, hits: number): Promise<[number, number]>;
};

/**
 * Rate-limit windows in Redis, shared by every node that uses the same Redis and key prefix,
 * one script call per hit: about 3× the hits per second of the same three commands sent as
 * a MULTI (one request and one reply instead of five; docs/performance.md).
 *
 * Redis is an accelerator, not a dependency: commands are not queued while it is unreachable
 * and time out quickly, so a Redis outage makes the limiter fail open (the caller skips the
 * count) instead of holding requests.
 */
export class RedisRateLimitWindows {
  readonly #redis: RedisWithHit;
  readonly #log: Logger;
  /** False from the first failure until a hit is counted again: one log line each way. */
  #counting = true;
  #closing = false;

  private constructor(redis: RedisWithHit, log: Logger) {
    this.#redis = redis;
    this.#log = log;
    redis.on('error', (error: Error) => this.#failed(error.message));
    redis.on('close', () => this.#failed('connection closed'));
  }

  /** Connects (waiting at most a moment) and keeps reconnecting in the background. */
  static async connect(config: RedisConfig, log: Logger): Promise<RedisRateLimitWindows> {
    const redis = new Redis(config.url, {
      keyPrefix: `${config.keyPrefix}ratelimit:`,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      connectTimeout: connectWaitMs,
    });
    redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: hitScript });
    const windows = new RedisRateLimitWindows(redis as RedisWithHit, log);
    const waited = AbortSignal.timeout(connectWaitMs);
    await Promise.race([
      redis.connect().catch(() => {}), // reported by the 'error' listener
      new Promise((resolve) => waited.addEventListener('abort', resolve, { once: true })),
    ]);
    return windows;
  }

  async hit(key: string, windowMs: number, hits: number): Promise<WindowHit> {
    let reply: [number, number];
    try {
      reply = await this.#redis.rateLimitHit(key, windowMs, hits);
    } catch (error) {
      // Unreachable, or reachable but refusing (out of memory, a read-only replica, an ACL).
      this.#failed((error as Error).message);
      throw error;
    }
    if (!this.#counting) {
      this.#counting = true;
      this.#log.info({}, 'Redis counts rate limits again');
    }
    const [total, ttlMs] = reply;
    return { hits: total, ttlMs: ttlMs > 0 ? ttlMs : windowMs };
  }

  close(): void {
    this.#closing = true;
    this.#redis.disconnect();
  }

  #failed(reason: string): void {
    if (this.#closing || !this.#counting) return;
    this.#counting = false;
    this.#log.warn({ err: reason }, 'Redis does not count; rate limits are not applied');
  }
}
