import { setTimeout as wait } from 'node:timers/promises';
import { systemClock } from '../../shared/clock.ts';
import { providerExchange } from './http-exchange.ts';
import type { RemoteDeps } from './remote-deps.ts';
import { isRetryableStatus, parseRetryAfter, retryDelayMs } from './retry-timing.ts';

/** One call of a provider's HTTP API; see {@link callProvider}. */
export interface ProviderCall {
  /** For metrics: `${engine} ${origin}` (remote-deps.ts `backendName`). */
  readonly backend: string;
  readonly url: string;
  /** Method, headers and body as fetch takes them (the signal is {@link signal}). */
  readonly init: RequestInit;
  /** The task's: cancellation, lease loss and its run-time deadline abort the call. */
  readonly signal: AbortSignal;
  /** Time to open the connection, per attempt. */
  readonly connectTimeoutMs?: number;
  /** Time for one attempt, from sending to the end of its body. */
  readonly callTimeoutMs?: number;
  /** Attempts in all (1 for no retry). */
  readonly maxAttempts?: number;
}

/**
 * Every attempt failed to get an answer (connection refused, reset, timed out). Its message
 * names no address, for it may reach a finish message (`http://gpu-box.internal:8880` is not
 * the account's business); `detail` has the origin and the last error, for the log.
 */
export class ProviderUnreachableError extends Error {
  override readonly name = 'ProviderUnreachableError';
  readonly attempts: number;
  readonly detail: string;
  constructor(attempts: number, detail: string) {
    super(`No answer after ${attempts} attempt(s)`);
    this.attempts = attempts;
    this.detail = detail;
  }
}

const defaults = {
  connectTimeoutMs: 10_000, // 10 seconds
  callTimeoutMs: 600_000, // 10 minutes, as the OpenAI SDK: image models think for a while
  maxAttempts: 3,
};

/**
 * Sends a request, trying again on a network error, a timeout, 408, 409, 429 and 5xx (or as
 * the answer's `x-should-retry` says) after the
 * wait the provider asks for (`retry-after-ms`, `Retry-After`) or an exponential backoff, and
 * never past `signal`. Each attempt is observed. Resolves with the final response, whatever
 * its status (the caller reads the body); rejects with the signal's reason when aborted, or a
 * {@link ProviderUnreachableError} when no attempt got an answer.
 */
export async function callProvider(deps: RemoteDeps, call: ProviderCall): Promise<Response> {
  const o = { ...defaults, ...definedOnly(call) };
  const clock = deps.clock ?? systemClock;
  for (let attempt = 1; ; attempt++) {
    call.signal.throwIfAborted();
    const started = performance.now();
    const attemptSignal = AbortSignal.any([call.signal, AbortSignal.timeout(o.callTimeoutMs)]);
    let response: Response;
    try {
      response = await providerExchange(deps, call.backend, call.url, call.init, {
        signal: attemptSignal,
        connectTimeoutMs: o.connectTimeoutMs,
      });
    } catch (error) {
      deps.observe(call.backend, 'failed', performance.now() - started, null);
      call.signal.throwIfAborted();
      const reason = describe(error, attemptSignal, o.callTimeoutMs);
      if (attempt >= o.maxAttempts) {
        throw new ProviderUnreachableError(attempt, `${new URL(call.url).origin}: ${reason}`);
      }
      await pause(retryDelayMs(null, attempt), call.signal);
      continue;
    }
    const retry = shouldRetry(response) && attempt < o.maxAttempts;
    deps.observe(
      call.backend,
      response.ok ? 'ok' : 'failed',
      performance.now() - started,
      response.status,
    );
    if (!retry) return response;
    const asked = parseRetryAfter(response.headers, clock.now().getTime());
    await response.body?.cancel().catch(() => {});
    await pause(retryDelayMs(asked, attempt), call.signal);
  }
}

/**
 * Whether an answer is worth another attempt: `x-should-retry: true|false` when the provider
 * says (OpenAI's convention; Atelier's `/v1` says false for a generation that failed), else
 * the status rule.
 */
function shouldRetry(response: Response): boolean {
  const said = response.headers.get('x-should-retry');
  if (said === 'true') return true;
  if (said === 'false') return false;
  return isRetryableStatus(response.status);
}

/** Waits, or rejects with the signal's own reason (as every abort in the engines does). */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await wait(ms, undefined, { signal });
  } catch (error) {
    throw signal.aborted ? signal.reason : error;
  }
}

function describe(error: unknown, signal: AbortSignal, callTimeoutMs: number): string {
  if (signal.aborted) return `no complete answer within ${callTimeoutMs} ms`;
  const cause = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof cause === 'string' && !message.includes(cause) ? `${message} (${cause})` : message;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
