import type { ImageFormat, ImageModel, ImageSize } from './model.ts';
import { priceOf } from './model.ts';
import { SettingsReader, type Validated } from './settings-input.ts';

export { maxSeed, type SettingProblem, type Validated } from './settings-input.ts';

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

/**
 * Checks a raw image request against the model's capabilities and fills in defaults. `raw`
 * may come from GraphQL (typed) or from JSON (`estimateCost`), so every type is checked.
 * `randomSeed` is used when no seed is given, so the stored input reproduces the result.
 */
export function validateImageSettings(
  model: ImageModel,
  raw: Readonly<Record<string, unknown>>,
  randomSeed: () => number,
): Validated<ImageSettings> {
  const caps = model.capabilities;
  const read = new SettingsReader(raw);
  const prompt = read.text('prompt', caps.maxPromptLength);
  const negativePrompt = read.string('negativePrompt')?.trim() || null;
  if (negativePrompt !== null && negativePrompt.length > caps.maxPromptLength) {
    read.invalid('negativePrompt', `must be at most ${caps.maxPromptLength} characters`);
  }
  const width = read.int('width', 1, 16_384);
  const height = read.int('height', 1, 16_384);
  const aspectRatio = read.string('aspectRatio');
  const count = read.int('count', 1, 100) ?? 1;
  const seed = read.seed(randomSeed);
  const format = read.string('format')?.toLowerCase() ?? caps.formats[0]!;
  const elementIds = read.idList('elementIds');

  const size = pickSize(caps.sizes, width, height, aspectRatio, read);
  if (size !== undefined && count > size.maxCount) {
    read.unsupported('count', `at most ${size.maxCount} at ${size.width}x${size.height}`, {
      maxCount: size.maxCount,
    });
  }
  if (!(caps.formats as readonly string[]).includes(format)) {
    read.unsupported('format', `"${format}" is not offered by this model`, caps.formats);
  }
  if (elementIds.length > caps.maxElements) {
    read.unsupported('elementIds', `at most ${caps.maxElements} elements`, {
      maxElements: caps.maxElements,
    });
  }
  return read.result(() => ({
    prompt,
    negativePrompt,
    width: size!.width,
    height: size!.height,
    aspectRatio: size!.aspectRatio,
    count,
    seed,
    format: format as ImageFormat,
    elementIds,
  }));
}

function pickSize(
  sizes: readonly ImageSize[],
  width: number | undefined,
  height: number | undefined,
  aspectRatio: string | undefined,
  read: SettingsReader,
): ImageSize | undefined {
  const unsupported = read.unsupported.bind(read);
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

/** Credits a validated request costs under the model's pricing. */
export function priceImage(model: ImageModel, settings: ImageSettings): number {
  return priceOf(model, settings.count);
}
