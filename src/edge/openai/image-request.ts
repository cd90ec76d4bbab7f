import type { ParamNames } from './openai-error.ts';
import { RequestFields } from './request-fields.ts';

/** `POST /v1/images/generations` as the image generation it asks for. */
export interface ImageRequest {
  /** The input of `generations.submit(actor, 'image', …)`, as GraphQL's GenerateImageInput. */
  readonly input: Readonly<Record<string, unknown>>;
  readonly responseFormat: 'url' | 'b64_json';
}

/**
 * The parameters of the endpoint (openai-media.md; the SDK's ImageGenerateParams). `user`,
 * `safety_identifier` and `moderation` are accepted and ignored (end-user labels, a moderation
 * level: Atelier moderates nothing). The others Atelier's models cannot honour are accepted
 * only at the value that asks for nothing: they have one quality, choose their background, and
 * take no style, compression level, complexity, animation frames, SVG author or streaming.
 */
const known = [
  'model',
  'prompt',
  'n',
  'size',
  'response_format',
  'output_format',
  'quality',
  'background',
  'moderation',
  'style',
  'output_compression',
  'complexity',
  'frame_count',
  'frame_duration_ms',
  'svg',
  'stream',
  'partial_images',
  'safety_identifier',
  'user',
];

/** Parameters refused unless absent or at one of these values. */
const neutralOnly: ReadonlyArray<readonly [string, readonly unknown[], string]> = [
  ['quality', ['auto', 'standard'], 'Atelier models have one quality'],
  ['background', ['auto'], 'Atelier models choose the background'],
  ['style', [], 'Atelier models take no style; leave it out'],
  ['output_compression', [100], 'Atelier models take no compression level'],
  ['complexity', [], 'Atelier models take no complexity; leave it out'],
  ['frame_count', [], 'animated images are not offered'],
  ['frame_duration_ms', [], 'animated images are not offered'],
  ['svg', [], 'SVG output is not offered'],
  ['stream', [false], 'streamed partial images are not offered'],
  ['partial_images', [0], 'streamed partial images are not offered'],
];

/** Translates the request, refusing what cannot be honoured; the service checks the rest. */
export function imageRequest(body: unknown, idempotencyKey: string | undefined): ImageRequest {
  const fields = new RequestFields(body, known);
  const { model, prompt, n, size, response_format, output_format } = fields.body;
  let dimensions: { width?: number; height?: number } = {};
  if (typeof size === 'string' && /^\d{1,5}x\d{1,5}$/.test(size)) {
    const [width, height] = size.split('x').map(Number);
    dimensions = { width: width!, height: height! };
  } else if (size !== undefined && size !== null && size !== 'auto') {
    fields.invalid('size', 'must be "auto" or WIDTHxHEIGHT, e.g. "1024x1024"');
  }
  const responseFormat = response_format ?? 'url';
  if (responseFormat !== 'url' && responseFormat !== 'b64_json')
    fields.invalid('response_format', 'must be "url" or "b64_json"');
  for (const [field, neutral, why] of neutralOnly) fields.onlyNeutral(field, neutral, why);
  fields.check();
  return {
    input: {
      modelId: model,
      prompt,
      count: n,
      ...dimensions,
      format: output_format,
      idempotencyKey,
    },
    responseFormat: responseFormat as ImageRequest['responseFormat'],
  };
}

const imageParams: Readonly<Record<string, string>> = {
  modelId: 'model',
  count: 'n',
  width: 'size',
  height: 'size',
  aspectRatio: 'size',
  format: 'output_format',
  idempotencyKey: 'Idempotency-Key',
};

/** The service's fields as this endpoint's parameters; a model's sizes as `"WxH"`. */
export const imageParamNames: ParamNames = {
  param: (field) => imageParams[field] ?? field,
  allowed: (param, allowed) =>
    param === 'size' && Array.isArray(allowed)
      ? allowed.map((s: { width?: unknown; height?: unknown }) => `${s.width}x${s.height}`)
      : allowed,
};
