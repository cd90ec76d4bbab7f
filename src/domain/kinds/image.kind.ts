import type { ElementPicture } from '../element.ts';
import type { ImageFormat, ImageModel, ImageSize } from '../model.ts';
import { type FieldTable, SettingsReader, seedField } from './fields.ts';
import type { KindModule } from './kind.ts';

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

/** What the engine is given besides the settings. */
export interface ImageInputs {
  readonly elements: readonly ElementPicture[];
}

const fields = {
  prompt: { type: 'string', required: true, description: 'What to draw.' },
  negativePrompt: { type: 'string', description: 'What to keep out of the picture.' },
  width: {
    type: 'int',
    min: 1,
    max: 16_384,
    description: 'With height: one of the model’s sizes.',
  },
  height: { type: 'int', min: 1, max: 16_384 },
  aspectRatio: { type: 'string', description: 'e.g. "16:9"; instead of width and height.' },
  count: { type: 'int', min: 1, max: 100, default: 1, description: 'How many images.' },
  seed: seedField,
  format: { type: 'string', description: 'One of the model’s formats (png, jpeg, webp).' },
  elementIds: {
    type: 'idList',
    description: 'Elements, from the element list, to put in the picture.',
  },
} as const satisfies FieldTable;

/** Checks a raw image request against the model's sizes, formats and limits. */
export function validateImage(
  model: ImageModel,
  raw: Readonly<Record<string, unknown>>,
  randomSeed: () => number,
) {
  const caps = model.capabilities;
  const read = new SettingsReader(raw, fields);
  const prompt = read.text('prompt', caps.maxPromptLength);
  const negativePrompt = read.string('negativePrompt')?.trim() || null;
  if (negativePrompt !== null && negativePrompt.length > caps.maxPromptLength) {
    read.invalid('negativePrompt', `must be at most ${caps.maxPromptLength} characters`);
  }
  const width = read.int('width');
  const height = read.int('height');
  const aspectRatio = read.string('aspectRatio');
  const count = read.int('count') ?? 1;
  const seed = read.int('seed') ?? randomSeed();
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
  return read.result<ImageSettings>(() => ({
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
  read: SettingsReader<typeof fields>,
): ImageSize | undefined {
  const allowedSizes = sizes.map((s) => ({
    width: s.width,
    height: s.height,
    aspectRatio: s.aspectRatio,
  }));
  if ((width === undefined) !== (height === undefined)) {
    read.unsupported(
      width === undefined ? 'width' : 'height',
      'give width and height together',
      allowedSizes,
    );
    return undefined;
  }
  if (width !== undefined && height !== undefined) {
    const size = sizes.find((s) => s.width === width && s.height === height);
    if (size === undefined) {
      read.unsupported('width', `${width}x${height} is not offered by this model`, allowedSizes);
      return undefined;
    }
    if (aspectRatio !== undefined && aspectRatio !== size.aspectRatio) {
      read.unsupported(
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
      read.unsupported('aspectRatio', `"${aspectRatio}" is not offered by this model`, [
        ...new Set(sizes.map((s) => s.aspectRatio)),
      ]);
    }
    return size;
  }
  return sizes[0];
}

/** Images: priced per image. */
export const imageKind: KindModule<'image', ImageSettings, ImageInputs> = {
  kind: 'image',
  names: { mutation: 'generateImage', inputType: 'GenerateImageInput', tool: 'generate_image' },
  title: 'Generate images',
  summary: 'an image generation',
  fields,
  validate: validateImage,
  async resolve(_model, settings, references) {
    await references.elements(settings.elementIds, 'elementIds');
    return { settings, units: settings.count };
  },
  async load(settings, loader) {
    return { elements: await loader.elementPictures(settings.elementIds, 'elementIds') };
  },
};
