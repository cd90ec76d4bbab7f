import { FinishCode } from '../../domain/finish-code.ts';
import type { EngineFailure } from '../engine.ts';
import { readPrefix } from './read-body.ts';

// A provider's refusal becomes a finish the user can read: its own message, with every
// credential taken out — a provider may echo part of a key ("Incorrect API key provided:
// sk-abc…"), and finishMessage is shown to the account, stored and logged.

const longestMessage = 500; // characters kept of a provider's message

/** Provider error codes that mean "your prompt or image was refused by a content policy". */
const contentPolicyCodes = new Set([
  'moderation_blocked',
  'content_policy_violation',
  'content_filter',
  'safety_violation',
]);

/** The OpenAI error envelope `{"error": {message, type, param, code}}`, as far as it is there. */
export interface ProviderError {
  readonly status: number;
  readonly message: string;
  readonly type: string | null;
  readonly code: string | null;
}

/**
 * `text` with every secret replaced by `[redacted]`, and with what looks like an API key
 * (OpenAI's `sk-…`, Atelier's `svc_…`, Replicate's `r8_…`, `Bearer …`) masked too: a provider
 * may echo a key shortened or altered.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out
    .replace(/\b(Bearer\s+)[\w.~+/=-]+/gi, '$1[redacted]')
    .replace(/\b(sk|svc|r8)[-_][\w*.-]{6,}/gi, '[redacted]');
}

/** How much of an error answer is read: the envelope is small; a proxy's HTML page need not be. */
const errorBodyBytes = 65_536; // 64 KiB

/** Reads an error answer (JSON envelope or plain text) without trusting its shape or size. */
export async function readProviderError(response: Response): Promise<ProviderError> {
  const text = await readPrefix(response, errorBodyBytes).catch(() => '');
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    envelope = undefined;
  }
  const error = (envelope as { error?: unknown } | undefined)?.error;
  const field = (name: string): string | null => {
    const value = (error as Record<string, unknown> | undefined)?.[name];
    return typeof value === 'string' && value !== '' ? value : null;
  };
  const message =
    typeof error === 'string'
      ? error
      : (field('message') ?? (text.trim() || response.statusText || 'no message'));
  return { status: response.status, message, type: field('type'), code: field('code') };
}

/** Whether the provider refused the input under its content policy. */
export function isContentPolicyRefusal(error: ProviderError): boolean {
  return (
    (error.code !== null && contentPolicyCodes.has(error.code)) ||
    error.type === 'image_generation_user_error'
  );
}

/**
 * The failure of a task the provider refused: code 4 (rejected input) for a content-policy
 * refusal, 1 (engine failure) for anything else; the provider's message, redacted and cut.
 */
export function providerFailure(
  provider: string,
  error: ProviderError,
  secrets: readonly string[],
): EngineFailure {
  const refused = isContentPolicyRefusal(error);
  const said = redact(error.message, secrets).slice(0, longestMessage);
  const code = error.code === null ? '' : ` (${redact(error.code, secrets)})`;
  return {
    ok: false,
    finishCode: refused ? FinishCode.RejectedInput : FinishCode.EngineFailure,
    message: refused
      ? `${provider} refused the request under its content policy: ${said}. Credits were refunded.`
      : `${provider} failed with HTTP ${error.status}${code}: ${said}. Credits were refunded.`,
  };
}

/** A failure that is not the provider's answer (unreachable, a bad output), redacted. */
export function engineFailure(message: string, secrets: readonly string[]): EngineFailure {
  return {
    ok: false,
    finishCode: FinishCode.EngineFailure,
    message: `${redact(message, secrets).slice(0, longestMessage)} Credits were refunded.`,
  };
}
