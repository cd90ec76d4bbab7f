import { setTimeout as wait } from 'node:timers/promises';
import { systemClock } from '../../shared/clock.ts';
import { providerExchange } from '../remote/http-exchange.ts';
import type { RemoteDeps } from '../remote/remote-deps.ts';
import { parseRetryAfter, retryDelayMs } from '../remote/retry-timing.ts';

/**
 * No attempt of a create got an answer. Its message names no address (it becomes the finish
 * message); `detail` has the origin and the last error, for the log.
 */
export class CreateUnanswered extends Error {
  override readonly name = 'CreateUnanswered';
  readonly detail: string;
  constructor(attempts: number, detail: string) {
    super(`No answer from Replicate to the prediction request after ${attempts} attempt(s)`);
    this.detail = detail;
  }
}

/** Attempts of one create in all. */
const maxAttempts = 3;
const connectTimeoutMs = 10_000; // 10 seconds, as every provider call
/** With `Prefer: wait` the answer comes after up to 60 s; a create is otherwise quick. */
const callTimeoutMs = 120_000; // 2 minutes

/**
 * Sends a prediction create, and sends it again only when it surely made nothing: a refused
 * connection (no request left this host) or a 429 (Replicate throttles before it creates),
 * after the `Retry-After` asked for. Replicate has no idempotency key, so a create that timed
 * out, was reset or answered 5xx may have made a prediction: sending another would make (and
 * bill) a second one, so its answer or error stands. Resolves with the final response;
 * rejects with the signal's reason, or a {@link CreateUnanswered}.
 */
export async function sendCreate(
  deps: RemoteDeps,
  call: { backend: string; url: string; init: RequestInit; signal: AbortSignal },
): Promise<Response> {
  const clock = deps.clock ?? systemClock;
  for (let attempt = 1; ; attempt++) {
    call.signal.throwIfAborted();
    const started = performance.now();
    const attemptSignal = AbortSignal.any([call.signal, AbortSignal.timeout(callTimeoutMs)]);
    let response: Response;
    try {
      response = await providerExchange(deps, call.backend, call.url, call.init, {
        signal: attemptSignal,
        connectTimeoutMs,
      });
    } catch (error) {
      deps.observe(call.backend, 'failed', performance.now() - started, null);
      call.signal.throwIfAborted();
      const refused = (error as { code?: unknown }).code === 'ECONNREFUSED';
      if (!refused || attempt >= maxAttempts) {
        const reason = attemptSignal.aborted
          ? `no complete answer within ${callTimeoutMs} ms`
          : (error as Error).message;
        throw new CreateUnanswered(attempt, `${new URL(call.url).origin}: ${reason}`);
      }
      await pause(retryDelayMs(null, attempt), call.signal);
      continue;
    }
    deps.observe(
      call.backend,
      response.ok ? 'ok' : 'failed',
      performance.now() - started,
      response.status,
    );
    if (response.status !== 429 || attempt >= maxAttempts) return response;
    const asked = parseRetryAfter(response.headers, clock.now().getTime());
    await response.body?.cancel().catch(() => {});
    await pause(retryDelayMs(asked, attempt), call.signal);
  }
}

/** Waits, or rejects with the signal's own reason (as every abort in the engines does). */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await wait(ms, undefined, { signal });
  } catch (error) {
    throw signal.aborted ? signal.reason : error;
  }
}
