import { FinishCode } from '../../domain/finish-code.ts';
import type { EngineFailure } from '../engine.ts';
import { type FailureClass, remoteFailure } from '../remote/provider-failure.ts';
import { readBody } from '../remote/read-body.ts';
import type { Prediction } from './replicate-prediction.ts';

// Replicate reports a model's refusal the way it reports any model failure: `status: "failed"`
// with free text in `error`, no code (protocol doc, "Errors"). So refusals are told apart by
// their words — Replicate's Stable Diffusion safety checker says "NSFW content detected", other
// models "flagged as sensitive" or "E005". The account is told the class; the words are logged.

const maxErrorBytes = 64 * 1024; // an error answer read, at most
const refusalWords =
  /\bnsfw\b|content polic|flagged as sensitive|\bsensitive content\b|\bE005\b|safety (checker|filter|system)/i;

/** The finish of a prediction that ended without output: failed, canceled or aborted. */
export function predictionFailure(
  prediction: Prediction,
  secrets: readonly string[],
): EngineFailure {
  const said = prediction.error ?? 'no reason given';
  if (prediction.status === 'failed') {
    const refused = refusalWords.test(said);
    return failure(
      refused ? 'refused' : 'failed',
      `Replicate's prediction ${prediction.id} failed: ${said}`,
      secrets,
    );
  }
  return failure(
    'interrupted',
    prediction.status === 'aborted'
      ? `Replicate's prediction ${prediction.id} was aborted before it ran (its deadline passed)`
      : `Replicate's prediction ${prediction.id} was canceled at Replicate`,
  );
}

/**
 * An HTTP error answer of Replicate's API (RFC 7807 problem details: `title`, `detail`); the
 * backend's fault when Replicate was overloaded or failing (5xx, 429).
 */
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
  return remoteFailure(
    'failed',
    `Replicate answered ${what} with HTTP ${response.status}: ${said || response.statusText || 'no message'}`,
    secrets,
    response.status >= 500 || response.status === 429,
    response.status,
  );
}

/** A failure of Replicate's side, of a class, with what happened for the log. */
export function failure(
  kind: FailureClass,
  detail: string,
  secrets: readonly string[] = [],
): EngineFailure {
  return remoteFailure(kind, detail, secrets);
}

/**
 * An input this model cannot take, in Atelier's own words (no provider text): the account can
 * act on it, so it is the finish message itself.
 */
export function inputFailure(message: string): EngineFailure {
  return {
    ok: false,
    finishCode: FinishCode.RejectedInput,
    message: `${message} Credits were refunded.`,
  };
}
