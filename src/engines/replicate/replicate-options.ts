import { defaultMaxRunSeconds, type GenerationKind } from '../../domain/model.ts';
import { templateProblems } from './replicate-template.ts';

/**
 * A Replicate model's `engineOptions`, read once per run and checked at start (every problem
 * listed). Either `model` (`owner/name`, an official model: `POST /models/{owner}/{name}/
 * predictions`) or `version` (`owner/name:<id>` or a bare id: `POST /predictions`), the
 * `input` template, and the variable holding the API token.
 */
export interface ReplicateOptions {
  /** `https://api.replicate.com/v1` unless the operator names another (a proxy, a stand-in). */
  readonly baseUrl: string;
  readonly apiKeyEnv: string;
  readonly model: string | null;
  readonly version: string | null;
  readonly input: Readonly<Record<string, unknown>>;
  /** For a model whose output is an object: the key of the file to keep. */
  readonly outputKey: string | null;
  /** Between two reads of a running prediction. */
  readonly pollMs: number;
  /** `Prefer: wait=N` on create (1 to 60 seconds), or null for none. */
  readonly waitSeconds: number | null;
  /**
   * `Cancel-After` on create: Replicate stops the prediction itself after this long, even if
   * no worker is left to cancel it (the model's `maxRunSeconds` is a good value); by default
   * {@link defaultCancelAfterSeconds}.
   */
  readonly cancelAfterSeconds: number;
  /** Input files up to this size go inline as `data:` URIs; larger ones through `POST /files`. */
  readonly inlineMaxBytes: number;
  /** The largest output file accepted. */
  readonly maxOutputBytes: number;
  /** How long one output download may take. */
  readonly outputTimeoutMs: number;
}

export const defaultBaseUrl = 'https://api.replicate.com/v1';
const defaultPollMs = 1_000; // 1 second
const defaultOutputTimeoutMs = 120_000; // 2 minutes
const mib = 1024 * 1024;
/** Replicate's advice: data URIs only up to 256 kB (protocol doc, "Files and file inputs"). */
const defaultInlineMaxBytes = 256 * 1024;
/** Images and speech are megabytes; videos can be hundreds. */
const defaultMaxOutputBytes: Readonly<Record<GenerationKind, number>> = {
  image: 64 * mib,
  speech: 64 * mib,
  video: 512 * mib,
  avatar: 512 * mib,
};

/** Time a prediction may wait in Replicate's queue beyond the run limit (`starting`). */
const cancelAfterMarginSeconds = 60; // 1 minute

/**
 * `Cancel-After` when a model names none: the kind's default run limit plus a margin. A task
 * can end with no worker left to cancel its prediction (cancelled while queued between
 * attempts, its last attempt failing, finished as lost by the sweeper); this bounds what such
 * a prediction costs. A model with a longer `maxRunSeconds` must set its own (checked at start).
 */
export function defaultCancelAfterSeconds(kind: GenerationKind): number {
  return defaultMaxRunSeconds[kind] + cancelAfterMarginSeconds;
}

const ownerName = /^[\w.-]+\/[\w.-]+$/;
const versionId = /^(?:[\w.-]+\/[\w.-]+(?::[0-9a-f]{64})?|[0-9a-f]{64})$/;

/** The options, or every problem with them. */
export function readOptions(
  kind: GenerationKind,
  raw: Readonly<Record<string, unknown>>,
): { ok: true; options: ReplicateOptions } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const text = (key: string): string | null => {
    const value = raw[key];
    if (value === undefined) return null;
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    problems.push(`engineOptions.${key} must be a non-empty string`);
    return null;
  };
  const integer = (key: string, min: number, max: number): number | null => {
    const value = raw[key];
    if (value === undefined) return null;
    if (Number.isInteger(value) && (value as number) >= min && (value as number) <= max) {
      return value as number;
    }
    problems.push(`engineOptions.${key} must be an integer from ${min} to ${max}`);
    return null;
  };

  const baseUrl = text('baseUrl') ?? defaultBaseUrl;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    problems.push(`engineOptions.baseUrl must be an http(s) URL, not "${baseUrl}"`);
  }
  const apiKeyEnv = text('apiKeyEnv');
  if (apiKeyEnv === null && raw.apiKeyEnv === undefined) {
    problems.push('engineOptions.apiKeyEnv must name the variable that holds the API token');
  }
  const model = text('model');
  const version = text('version');
  if ((model === null) === (version === null)) {
    problems.push('engineOptions must give either model ("owner/name") or version');
  } else if (model !== null && !ownerName.test(model)) {
    problems.push(`engineOptions.model must be "owner/name", not "${model}"`);
  } else if (version !== null && !versionId.test(version)) {
    problems.push(`engineOptions.version must be "owner/name:<64-hex id>" or the id`);
  }
  const input = raw.input;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    problems.push('engineOptions.input must be the model input template (an object)');
  } else {
    problems.push(...templateProblems(kind, input).map((p) => `engineOptions.${p}`));
  }
  const options = {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKeyEnv: apiKeyEnv ?? '',
    model,
    version,
    input: input as Record<string, unknown>,
    outputKey: text('outputKey'),
    pollMs: integer('pollMs', 10, 60_000) ?? defaultPollMs,
    waitSeconds: integer('waitSeconds', 1, 60),
    cancelAfterSeconds:
      integer('cancelAfterSeconds', 5, 604_800) ?? defaultCancelAfterSeconds(kind),
    inlineMaxBytes: integer('inlineMaxBytes', 0, 100 * mib) ?? defaultInlineMaxBytes,
    maxOutputBytes: integer('maxOutputBytes', 1, 4096 * mib) ?? defaultMaxOutputBytes[kind],
    outputTimeoutMs: integer('outputTimeoutMs', 10, 3_600_000) ?? defaultOutputTimeoutMs,
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, options };
}
