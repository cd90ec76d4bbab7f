import type { ErrorCode } from '../shared/errors.ts';
import type { ImageFormat, ImageSize, ModelDefinition } from './model.ts';

/** A validated, complete image request: what is priced, stored and given to the engine. */
export interface ImageSettings {
  readonly prompt: string;
  readonly negativePrompt: string | null;
  readonly width: number;
  readonly height: number;
  readonly aspectRatio: string;
  readonly count: number;
  readonly seed: number;
  readonly format: ImageFormat;
  readonly elementIds: readonly string[];
}

/** One thing wrong with a request; all of them are reported together. */
export interface SettingProblem {
  readonly field: string;
  readonly message: string;
  /** 120001: the value itself is invalid; 120002: the model does not support it (here). */
  readonly code: Extract<ErrorCode, '120001' | '120002'>;
  readonly allowed?: unknown;
}

export type Validated<T> =
  | { readonly ok: true; readonly settings: T }
  | { readonly ok: false; readonly problems: readonly SettingProblem[] };

export const maxSeed = 2_147_483_647;

/**
 * Checks a raw image request against the model's capabilities and fills in defaults. `raw`
 * may come from GraphQL (typed) or from JSON (`estimateCost`), so every type is checked.
 * `randomSeed` is used when no seed is given, so the stored input reproduces the result.
 */
export function validateImageSettings(
  model: ModelDefinition,
  raw: Readonly<Record<string, unknown>>,
  randomSeed: () => number,
): Validated<ImageSettings> {
  const caps = model.capabilities;
  const problems: SettingProblem[] = [];
  const invalid = (field: string, message: string) =>
    problems.push({ field, message, code: '120001' });
  const unsupported = (field: string, message: string, allowed: unknown) =>
    problems.push({ field, message, code: '120002', allowed });

  const givenPrompt = optionalString(raw.prompt, 'prompt', invalid);
  const prompt = givenPrompt?.trim() ?? '';
  if (prompt.length === 0 && (givenPrompt !== undefined || raw.prompt == null)) {
    invalid('prompt', 'must not be empty');
  } else if (prompt.length > caps.maxPromptLength) {
    invalid('prompt', `must be at most ${caps.maxPromptLength} characters`);
  }
  const negativePrompt =
    optionalString(raw.negativePrompt, 'negativePrompt', invalid)?.trim() || null;
  if (negativePrompt !== null && negativePrompt.length > caps.maxPromptLength) {
    invalid('negativePrompt', `must be at most ${caps.maxPromptLength} characters`);
  }
  const width = optionalInt(raw.width, 'width', 1, 16_384, invalid);
  const height = optionalInt(raw.height, 'height', 1, 16_384, invalid);
  const aspectRatio = optionalString(raw.aspectRatio, 'aspectRatio', invalid);
  const count = optionalInt(raw.count, 'count', 1, 100, invalid) ?? 1;
  const seed = optionalInt(raw.seed, 'seed', 0, maxSeed, invalid);
  const format = optionalString(raw.format, 'format', invalid)?.toLowerCase() ?? caps.formats[0]!;
  const elementIds = optionalIdList(raw.elementIds, 'elementIds', invalid);

  const size = pickSize(caps.sizes, width, height, aspectRatio, unsupported);
  if (size !== undefined && count > size.maxCount) {
    unsupported('count', `at most ${size.maxCount} at ${size.width}x${size.height}`, {
      maxCount: size.maxCount,
    });
  }
  if (!(caps.formats as readonly string[]).includes(format)) {
    unsupported('format', `"${format}" is not offered by this model`, caps.formats);
  }
  if (elementIds.length > caps.maxElements) {
    unsupported('elementIds', `at most ${caps.maxElements} elements`, {
      maxElements: caps.maxElements,
    });
  }
  if (problems.length > 0 || size === undefined) return { ok: false, problems };
  return {
    ok: true,
    settings: {
      prompt,
      negativePrompt,
      width: size.width,
      height: size.height,
      aspectRatio: size.aspectRatio,
      count,
      seed: seed ?? randomSeed(),
      format: format as ImageFormat,
      elementIds,
    },
  };
}

function pickSize(
  sizes: readonly ImageSize[],
  width: number | undefined,
  height: number | undefined,
  aspectRatio: string | undefined,
  unsupported: (field: string, message: string, allowed: unknown) => void,
): ImageSize | undefined {
  const allowedSizes = sizes.map((s) => ({
    width: s.width,
    height: s.height,
    aspectRatio: s.aspectRatio,
  }));
  if ((width === undefined) !== (height === undefined)) {
    unsupported(
      width === undefined ? 'width' : 'height',
      'give width and height together',
      allowedSizes,
    );
    return undefined;
  }
  if (width !== undefined && height !== undefined) {
    const size = sizes.find((s) => s.width === width && s.height === height);
    if (size === undefined) {
      unsupported('width', `${width}x${height} is not offered by this model`, allowedSizes);
      return undefined;
    }
    if (aspectRatio !== undefined && aspectRatio !== size.aspectRatio) {
      unsupported(
        'aspectRatio',
        `${width}x${height} is ${size.aspectRatio}, not ${aspectRatio}`,
        allowedSizes,
      );
      return undefined;
    }
    return size;
  }
  if (aspectRatio !== undefined) {
    const size = sizes.find((s) => s.aspectRatio === aspectRatio);
    if (size === undefined) {
      unsupported('aspectRatio', `"${aspectRatio}" is not offered by this model`, [
        ...new Set(sizes.map((s) => s.aspectRatio)),
      ]);
    }
    return size;
  }
  return sizes[0];
}

type Report = (field: string, message: string) => void;

function optionalString(value: unknown, field: string, invalid: Report): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  invalid(field, 'must be a string');
  return undefined;
}

function optionalInt(
  value: unknown,
  field: string,
  min: number,
  max: number,
  invalid: Report,
): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)
    return value;
  invalid(field, `must be a whole number from ${min} to ${max}`);
  return undefined;
}

function optionalIdList(value: unknown, field: string, invalid: Report): string[] {
  if (value === undefined || value === null) return [];
  if (
    Array.isArray(value) &&
    value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 64)
  ) {
    return [...new Set(value as string[])];
  }
  invalid(field, 'must be a list of IDs');
  return [];
}

/** Credits a validated request costs under the model's pricing. */
export function priceImage(model: ModelDefinition, settings: ImageSettings): number {
  return model.pricing.unit === 'image'
    ? model.pricing.credits * settings.count
    : model.pricing.credits;
}
