import { Redis } from 'ioredis';
import type { RedisConfig } from '../config/deployment.ts';
import type { Logger } from '../shared/logger.ts';
import type { WindowHit } from './rate-limit.store.ts';

/** How long a count may take before the request goes on uncounted. */
const commandTimeoutMs = 500;
/** How long start-up waits for Redis before serving without it (it keeps reconnecting). */
const connectWaitMs = 2_000;

/**
 * Rate-limit windows in Redis, shared by every node that uses the same Redis and key prefix.
 * A hit is one MULTI: create the window's key at 0 with the window's lifetime unless it exists,
 * increment it, read what is left of its lifetime. Redis runs a MULTI without interleaving
 * other clients' commands, so two nodes counting the same key never start two windows.
 *
 * Redis is an accelerator, not a dependency: commands are not queued while it is unreachable
 * and time out quickly, so a Redis outage makes the limiter fail open (the caller skips the
 * count) instead of holding requests.
 */
export class RedisRateLimitWindows {
  readonly #redis: Redis;

  private constructor(redis: Redis) {
    this.#redis = redis;
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
    // One line when Redis goes away and one when it is back, not one per reconnect attempt.
    let reachable = true;
    const lost = (reason: string) => {
      if (!reachable) return;
      reachable = false;
      log.warn({ err: reason }, 'Redis is unreachable; rate limits are not counted');
    };
    redis.on('error', (error: Error) => lost(error.message));
    redis.on('close', () => lost('connection closed'));
    redis.on('ready', () => {
      if (reachable) return;
      reachable = true;
      log.info({}, 'Redis is reachable again; rate limits are counted');
    });
    const waited = AbortSignal.timeout(connectWaitMs);
    await Promise.race([
      redis.connect().catch(() => {}), // reported by the 'error' listener
      new Promise((resolve) => waited.addEventListener('abort', resolve, { once: true })),
    ]);
    return new RedisRateLimitWindows(redis);
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
    const replies = await this.#redis
      .multi()
      .set(key, 0, 'PX', windowMs, 'NX')
      .incr(key)
      .pttl(key)
      .exec();
    if (replies === null) throw new Error('Redis discarded the rate-limit transaction');
    for (const [error] of replies) if (error) throw error;
    const hits = Number(replies[1]![1]);
    const ttlMs = Number(replies[2]![1]);
    return { hits, ttlMs: ttlMs > 0 ? ttlMs : windowMs };
  }

  close(): void {
    this.#redis.disconnect();
  }
}
