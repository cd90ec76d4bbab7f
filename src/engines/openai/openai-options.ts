import { probeServer } from '../remote/probe-server.ts';
import type { RemoteDeps } from '../remote/remote-deps.ts';

/** What every `openai-*` model says in its `engineOptions`. */
export interface OpenAiOptions {
  /** e.g. `https://api.openai.com/v1`, `http://localhost:8880/v1`; no trailing slash. */
  readonly baseUrl: string;
  /** The provider's model name (`gpt-image-1`, `gpt-4o-mini-tts`, `kokoro`). */
  readonly model: string;
  /** The variable holding the API key; null for a local server that wants none. */
  readonly apiKeyEnv: string | null;
  /** Largest output accepted (bytes). */
  readonly maxOutputBytes: number;
  /** Attempts per call (network errors, 429, 5xx). */
  readonly maxAttempts: number;
}

const defaultMaxOutputBytes = 50 * 1024 * 1024; // 50 MiB: a 4K PNG, minutes of WAV

/** Problems with the options every `openai-*` model shares (config checks apiKeyEnv's value). */
export function commonOptionProblems(options: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  if (typeof options.baseUrl !== 'string') {
    problems.push('engineOptions.baseUrl is required (e.g. "https://api.openai.com/v1")');
  }
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    problems.push('engineOptions.model is required: the model name the server knows');
  }
  for (const name of ['maxOutputBytes', 'maxAttempts'] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1)) {
      problems.push(`engineOptions.${name} must be a whole number ≥ 1`);
    }
  }
  return problems;
}

/** The shared options, read from options that passed {@link commonOptionProblems}. */
export function readOptions(options: Readonly<Record<string, unknown>>): OpenAiOptions {
  return {
    baseUrl: String(options.baseUrl).replace(/\/+$/, ''),
    model: String(options.model),
    apiKeyEnv: typeof options.apiKeyEnv === 'string' ? options.apiKeyEnv : null,
    maxOutputBytes:
      typeof options.maxOutputBytes === 'number' ? options.maxOutputBytes : defaultMaxOutputBytes,
    maxAttempts: typeof options.maxAttempts === 'number' ? options.maxAttempts : 3,
  };
}

/**
 * The headers of a JSON call: the key as a bearer token when there is one, and an
 * Idempotency-Key made from the task, so that a repeated POST (a retry after a 5xx, or the
 * task's next attempt after a lost lease) is recognised by servers that honour it — Atelier's
 * own `/v1` does — instead of charging twice.
 */
export function requestHeaders(
  deps: RemoteDeps,
  o: OpenAiOptions,
  taskId: string,
): Record<string, string> {
  const key = o.apiKeyEnv === null ? undefined : deps.secret(o.apiKeyEnv);
  return {
    'content-type': 'application/json',
    'idempotency-key': `atelier-${taskId}`,
    ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
  };
}

/** How the log names the model server: the engine and the provider's model name. */
export function serverLabel(engine: string, o: OpenAiOptions): string {
  return `${engine} (model ${o.model})`;
}

/** The secrets to redact from anything the provider says. */
export function secretsOf(deps: RemoteDeps, o: OpenAiOptions): string[] {
  const key = o.apiKeyEnv === null ? undefined : deps.secret(o.apiKeyEnv);
  return key === undefined ? [] : [key];
}

/** A backend's probe: `GET {baseUrl}/models`, the route OpenAI and most servers copying it have. */
export function probeOpenAi(
  deps: RemoteDeps,
  engine: string,
  options: Readonly<Record<string, unknown>>,
  signal: AbortSignal,
): Promise<void> {
  const o = readOptions(options);
  const key = o.apiKeyEnv === null ? undefined : deps.secret(o.apiKeyEnv);
  return probeServer(deps, engine, `${o.baseUrl}/models`, key, signal);
}
