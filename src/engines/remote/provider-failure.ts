import { FinishCode } from '../../domain/finish-code.ts';
import type { EngineFailure } from '../engine.ts';
import { readPrefix } from './read-body.ts';

// Two audiences (issue 30 §3): the account is told the class of a model server's failure — it
// failed, refused, could not be reached — and that its credits came back; the provider's own
// words, its status and its address are the operator's, in the log ("engine run ended",
// `detail`). A provider's error page names internal hosts, and its message may echo the
// operator's key in any spelling; neither is the account's business.

const longestDetail = 2_000; // characters kept of a provider's words for the log

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

/** How a remote engine's run failed, as far as the account is told. */
export type FailureClass =
  /** The provider refused the input under its content policy (finish code 4). */
  | 'refused'
  /** The provider refused the input for another reason (finish code 4). */
  | 'rejected'
  /** The model server answered with an error, or its work failed (1). */
  | 'failed'
  /** No answer from the model server (1). */
  | 'unreachable'
  /** The model server's result could not be used: missing, too large, not what was asked (1). */
  | 'unusable'
  /** The work was stopped on the model server before it finished (1). */
  | 'interrupted';

const forTheAccount: Record<FailureClass, { finishCode: FinishCode; message: string }> = {
  refused: {
    finishCode: FinishCode.RejectedInput,
    message: 'The model server refused this input under its content policy.',
  },
  rejected: {
    finishCode: FinishCode.RejectedInput,
    message: 'The model server refused this input.',
  },
  failed: { finishCode: FinishCode.EngineFailure, message: 'The model server failed.' },
  unreachable: {
    finishCode: FinishCode.EngineFailure,
    message: 'The model server could not be reached.',
  },
  unusable: {
    finishCode: FinishCode.EngineFailure,
    message: 'The model server returned a result that could not be used.',
  },
  interrupted: {
    finishCode: FinishCode.EngineFailure,
    message: 'The work was stopped on the model server before it finished.',
  },
};

/** Classes that are the backend's fault rather than the work's ({@link EngineFailure}). */
const backendFaults: ReadonlySet<FailureClass> = new Set(['unreachable', 'interrupted']);

/**
 * A remote engine's failure: its class, in the same words for every engine, for the account;
 * `detail` (secrets taken out, cut to a length) for the operator's log. No answer and work
 * stopped on the server are the backend's fault; a server's error answer is when
 * `serverFault` says so (an overloaded or failing server: 5xx, 429).
 */
export function remoteFailure(
  failure: FailureClass,
  detail: string,
  secrets: readonly string[] = [],
  serverFault = false,
  providerStatus?: number,
): EngineFailure {
  const { finishCode, message } = forTheAccount[failure];
  return {
    ok: false,
    finishCode,
    message: `${message} Credits were refunded.`,
    detail: redact(detail, secrets).slice(0, longestDetail),
    ...(providerStatus === undefined ? {} : { providerStatus }),
    ...(serverFault || backendFaults.has(failure) ? { backendFault: true } : {}),
  };
}

/**
 * `text` with every secret taken out, however a provider echoed it: as it is, in any letter
 * case, URL-encoded, in base64 or base64url, or a piece of any of these of 8 characters or more
 * (a key shortened to `sk-proj-Abc1…`); and with what looks like an API key (OpenAI's `sk-…`,
 * Atelier's `svc_…`, Replicate's `r8_…`, `Bearer …`) masked too, configured or not.
 */
export function redact(text: string, secrets: readonly string[]): string {
  const spellings = secrets
    .filter((secret) => secret.length >= 4)
    .flatMap((secret) => [
      secret,
      encodeURIComponent(secret),
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
    ])
    .map((spelling) => spelling.toLowerCase());
  const secretPiece = (token: string) => {
    const lower = token.toLowerCase();
    return spellings.some((s) => s.includes(lower) || lower.includes(s));
  };
  return text
    .replace(/\b(Bearer\s+)[\w.~+/=-]+/gi, '$1[redacted]')
    .replace(/\b(sk|svc|r8)[-_][\w*.-]{5,}[\w*-]/gi, '[redacted]')
    .replace(/[\w%+/=~-]{8,}/g, (token) => (secretPiece(token) ? '[redacted]' : token));
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
 * The failure of a task the provider refused: `refused` (4) for a content-policy refusal,
 * `failed` (1) for anything else, the backend's fault when the server was overloaded or
 * failing (5xx, 429); the status, code and message for the log.
 */
export function providerFailure(
  provider: string,
  error: ProviderError,
  secrets: readonly string[],
): EngineFailure {
  const code = error.code === null ? '' : ` (${error.code})`;
  const refused = isContentPolicyRefusal(error);
  return remoteFailure(
    refused ? 'refused' : 'failed',
    `${provider} answered HTTP ${error.status}${code}: ${error.message}`,
    secrets,
    !refused && (error.status >= 500 || error.status === 429),
    error.status,
  );
}
