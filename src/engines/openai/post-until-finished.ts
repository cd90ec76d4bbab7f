import { setTimeout as wait } from 'node:timers/promises';
import { FinishCode } from '../../domain/finish-code.ts';
import { systemClock } from '../../shared/clock.ts';
import { ErrorCode } from '../../shared/errors.ts';
import type { EngineFailure } from '../engine.ts';
import { callProvider, type ProviderCall } from '../remote/provider-call.ts';
import {
  type ProviderError,
  providerFailure,
  readProviderError,
  remoteFailure,
} from '../remote/provider-failure.ts';
import { readPrefix } from '../remote/read-body.ts';
import type { RemoteDeps } from '../remote/remote-deps.ts';
import { parseRetryAfter, retryDelayMs } from '../remote/retry-timing.ts';

// A model server that is another Atelier answers `/v1` in its own words when a generation
// outlasts its wait: 160001 (still running; the same Idempotency-Key waits for the same
// generation, charged once) and 160002 (finished without a result, with the task's finish
// code). docs/errors.md describes both.

const errorBodyBytes = 65_536; // 64 KiB: an error envelope is small; a proxy's page need not be

/** A refusal, with the finish code an upstream Atelier gave its generation, if it gave one. */
export interface Refusal {
  readonly error: ProviderError;
  /** `error.finishCode` of an upstream Atelier's 160002; null from any other server. */
  readonly finishCode: number | null;
}

/**
 * Sends a generation request ({@link callProvider}, with its retries), and sends it again,
 * unchanged (its Idempotency-Key included), for as long as the server answers that the
 * generation is still running (160001) — until the call's signal ends the task. Resolves with
 * the successful response, or with the refusal read from an unsuccessful one.
 */
export async function postUntilFinished(
  deps: RemoteDeps,
  call: ProviderCall,
): Promise<{ ok: true; response: Response } | ({ ok: false } & Refusal)> {
  const clock = deps.clock ?? systemClock;
  for (let round = 1; ; round++) {
    const response = await callProvider(deps, call);
    if (response.ok) return { ok: true, response };
    const text = await readPrefix(response, errorBodyBytes).catch(() => '');
    const error = await readProviderError(
      new Response(text, { status: response.status, statusText: response.statusText }),
    );
    if (error.code !== ErrorCode.GenerationPending)
      return { ok: false, error, finishCode: finishCodeOf(text) };
    // The server waited before answering; a short pause more keeps a fast answer from spinning.
    const asked = parseRetryAfter(response.headers, clock.now().getTime());
    await pause(retryDelayMs(asked, Math.min(round, 5)), call.signal);
  }
}

/**
 * The failure of a refused request: as {@link providerFailure} says, except that an upstream
 * Atelier's generation refused for its input (finish code 4) is refused here too (`rejected`),
 * not an engine failure (1).
 */
export function refusalFailure(
  server: string,
  refusal: Refusal,
  secrets: readonly string[],
): EngineFailure {
  const failure = providerFailure(server, refusal.error, secrets);
  return refusal.finishCode === FinishCode.RejectedInput &&
    failure.finishCode !== FinishCode.RejectedInput
    ? remoteFailure('rejected', failure.detail ?? '', secrets)
    : failure;
}

/** `error.finishCode` of an Atelier `/v1` error envelope, or null. */
function finishCodeOf(text: string): number | null {
  try {
    const code = (JSON.parse(text) as { error?: { finishCode?: unknown } }).error?.finishCode;
    return Number.isInteger(code) ? (code as number) : null;
  } catch {
    return null;
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
