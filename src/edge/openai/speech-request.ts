import type { ParamNames } from './openai-error.ts';
import { RequestFields } from './request-fields.ts';

/**
 * The parameters of `POST /v1/audio/speech` (openai-media.md). `instructions` (a speaking
 * style) and `stream_format: "sse"` cannot be honoured by Atelier's voices and are refused
 * unless empty or `"audio"`.
 */
const known = [
  'model',
  'input',
  'voice',
  'instructions',
  'response_format',
  'speed',
  'stream_format',
];

/**
 * OpenAI's `response_format` names of Atelier's audio formats where they differ: OpenAI's
 * `opus` is Opus in an Ogg file, which Atelier calls `ogg`. The other names (`mp3`, `wav`) are
 * the same; `aac`, `flac` and `pcm` go to the service as they are, which refuses them with the
 * model's formats in `allowed`.
 */
const atelierFormat: Readonly<Record<string, string>> = { opus: 'ogg' };
const openAiFormat: Readonly<Record<string, string>> = { ogg: 'opus' };

/**
 * The input of `generations.submit(actor, 'speech', …)`, as GraphQL's GenerateSpeechInput.
 * Without `response_format` the model's default format is used (the answer's Content-Type
 * says which); `voice` is a voice ID (`voc_…`), or OpenAI's custom voice object `{ id }`.
 */
export function speechRequest(
  body: unknown,
  idempotencyKey: string | undefined,
): Readonly<Record<string, unknown>> {
  const fields = new RequestFields(body, known);
  const { model, input, voice, response_format, speed } = fields.body;
  const voiceId =
    typeof voice === 'object' && voice !== null && !Array.isArray(voice)
      ? (voice as { id?: unknown }).id
      : voice;
  if (voiceId !== undefined && typeof voiceId !== 'string')
    fields.invalid('voice', 'must be a voice ID (voc_…) or { "id": "voc_…" }');
  fields.onlyNeutral('instructions', [''], 'Atelier voices take no speaking instructions');
  fields.onlyNeutral('stream_format', ['audio'], 'the audio is sent whole, not as events');
  fields.check();
  return {
    modelId: model,
    text: input,
    voiceModelId: voiceId,
    speed,
    format:
      typeof response_format === 'string'
        ? (atelierFormat[response_format] ?? response_format)
        : response_format,
    idempotencyKey,
  };
}

const speechParams: Readonly<Record<string, string>> = {
  modelId: 'model',
  text: 'input',
  voiceModelId: 'voice',
  format: 'response_format',
  idempotencyKey: 'Idempotency-Key',
};

/** The service's fields as this endpoint's parameters; audio formats by OpenAI's names. */
export const speechParamNames: ParamNames = {
  param: (field) => speechParams[field] ?? field,
  allowed: (param, allowed) =>
    param === 'response_format' && Array.isArray(allowed)
      ? allowed.map((f: string) => openAiFormat[f] ?? f)
      : allowed,
};
