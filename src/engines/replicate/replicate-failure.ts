import { FinishCode } from '../../domain/finish-code.ts';
import type { EngineFailure } from '../engine.ts';
import { redact } from '../remote/provider-failure.ts';
import { readBody } from '../remote/read-body.ts';
import type { Prediction } from './replicate-prediction.ts';

// Replicate reports a model's refusal the way it reports any model failure: `status: "failed"`
// with free text in `error`, no code (protocol doc, "Errors"). So refusals are told apart by
// their words — Replicate's Stable Diffusion safety checker says "NSFW content detected", other
// models "flagged as sensitive" or "E005" — and the raw message is kept for the user.

const longestMessage = 500; // characters kept of Replicate's message
const maxErrorBytes = 64 * 1024; // an error answer read, at most
const refusalWords =
  /\bnsfw\b|content polic|flagged as sensitive|\bsensitive content\b|\bE005\b|safety (checker|filter|system)/i;

/** The finish of a prediction that ended without output: failed, canceled or aborted. */
export function predictionFailure(
  prediction: Prediction,
  secrets: readonly string[],
): EngineFailure {
  const said = redact(prediction.error ?? 'no reason given', secrets).slice(0, longestMessage);
  if (prediction.status === 'failed' && refusalWords.test(said)) {
    return {
      ok: false,
      finishCode: FinishCode.RejectedInput,
      message: `Replicate's model refused the request under its content policy: ${said} Credits were refunded.`,
    };
  }
  const how =
    prediction.status === 'failed'
      ? `failed: ${said}`
      : prediction.status === 'aborted'
        ? 'was aborted before it ran (its deadline passed).'
        : 'was canceled at Replicate.';
  return failure(`Replicate's prediction ${prediction.id} ${how}`);
}

/** An HTTP error answer of Replicate's API (RFC 7807 problem details: `title`, `detail`). */
export async function apiFailure(
  what: string,
  response: Response,
  secrets: readonly string[],
): Promise<EngineFailure> {
  const text = await readBody(response, maxErrorBytes)
    .then((bytes) => bytes.toString('utf8'))
    .catch(() => '');
  let said = text.trim();
  try {
    const problem = JSON.parse(text) as { title?: unknown; detail?: unknown };
    const parts = [problem.title, problem.detail].filter((p) => typeof p === 'string' && p !== '');
    if (parts.length > 0) said = parts.join(': ');
  } catch {
    // not JSON: the text as it came
  }
  const reason = redact(said || response.statusText || 'no message', secrets);
  return failure(
    `Replicate answered ${what} with HTTP ${response.status}: ${reason.slice(0, longestMessage)}`,
  );
}

/** A failure in Atelier's words (a bad output, an unreachable API), with a refund note. */
export function failure(message: string, secrets: readonly string[] = []): EngineFailure {
  const text = redact(message, secrets).slice(0, longestMessage);
  return {
    ok: false,
    finishCode: FinishCode.EngineFailure,
    message: `${/[.!?]$/.test(text) ? text : `${text}.`} Credits were refunded.`,
  };
}
