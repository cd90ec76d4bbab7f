import { setTimeout as sleep } from 'node:timers/promises';
import { clientAddressKey } from '../shared/client-address.ts';
import type { RateLimitWindows } from './rate-limit-windows.ts';

/** Failed sign-ins are counted over 15 minutes, whatever the configured request window. */
const windowMs = 15 * 60_000; // 15 minutes
/** The first pause once an email has as many failures as one address may make. */
const firstPauseMs = 100;
/** The longest pause: an attacker's guesses slow down, the person still gets in. */
const maxPauseMs = 1_000; // 1 second

/** A failure counted for one (email, address): what the answer's RateLimit headers say. */
export interface SignInFailures {
  readonly max: number;
  readonly remaining: number;
  readonly resetSeconds: number;
}

/**
 * How sign-in resists guessing without letting a stranger lock a person out. Failures are
 * counted per (email, address): an address that failed `maxFailures` times for an email is
 * refused for that email until its window ends, and no other address is. Per email, failures
 * from anywhere only slow every attempt down (a pause that doubles from 100 ms up to 1 s once
 * the email has `maxFailures` failures), so the right password from the person's own address
 * always gets through. Counts that cannot be read (the store is down) refuse nothing.
 */
export class SignInThrottle {
  readonly #windows: RateLimitWindows;
  readonly #maxFailures: number;
  readonly #pause: (ms: number) => Promise<unknown>;

  constructor(o: {
    windows: RateLimitWindows;
    maxFailures: number;
    /** Waits `ms` (tests may pass one that records instead). */
    pause?: (ms: number) => Promise<unknown>;
  }) {
    this.#windows = o.windows;
    this.#maxFailures = o.maxFailures;
    this.#pause = o.pause ?? sleep;
  }

  /**
   * Before a password is checked: the seconds this address must wait for this email, or null
   * to go on (after the email's pause, if it has one). The attempt is counted here, before the
   * check — a count read now and written after it would let a burst of parallel guesses all
   * pass the same count — and given back by {@link succeeded} when the password was right.
   */
  async admit(email: string, address: string): Promise<{ retryAfterSeconds: number } | null> {
    const [fromAddress, forEmail] = await Promise.all([
      this.#count(addressKey(email, address), 1),
      this.#count(emailKey(email), 0),
    ]);
    if (fromAddress !== null && fromAddress.hits > this.#maxFailures)
      return { retryAfterSeconds: Math.max(1, Math.ceil(fromAddress.ttlMs / 1000)) };
    const pause = pauseMs(forEmail?.hits ?? 0, this.#maxFailures);
    if (pause > 0) await this.#pause(pause);
    return null;
  }

  /** An admitted attempt that was no failure (right password, or the check could not run). */
  async succeeded(email: string, address: string): Promise<void> {
    await this.#count(addressKey(email, address), -1);
  }

  /** Counts a failed admitted attempt for its email; null when it could not be counted. */
  async failed(email: string, address: string): Promise<SignInFailures | null> {
    const [fromAddress] = await Promise.all([
      this.#count(addressKey(email, address), 0),
      this.#count(emailKey(email), 1),
    ]);
    if (fromAddress === null) return null;
    return {
      max: this.#maxFailures,
      remaining: Math.max(0, this.#maxFailures - fromAddress.hits),
      resetSeconds: Math.ceil(fromAddress.ttlMs / 1000),
    };
  }

  async #count(key: string, hits: number) {
    return this.#windows.hit(key, windowMs, hits).catch(() => null);
  }
}

/** The pause before an attempt on an email with `failures` failures in its window. */
export function pauseMs(failures: number, maxFailures: number): number {
  if (failures < maxFailures) return 0;
  return Math.min(maxPauseMs, firstPauseMs * 2 ** Math.min(10, failures - maxFailures));
}

const normalized = (email: string) => email.trim().toLowerCase();
const emailKey = (email: string) => `sign-in:email:${normalized(email)}`;
const addressKey = (email: string, address: string) =>
  `sign-in:email-ip:${clientAddressKey(address)}:${normalized(email)}`;
