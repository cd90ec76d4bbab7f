import type { ElementPicture } from '../element.ts';
import type { VideoFormat, VideoMode, VideoModel } from '../model.ts';
import { type FieldTable, SettingsReader, seedField } from './fields.ts';
import type { KindModule } from './kind.ts';

/** A validated, complete video request: what is priced, stored and given to the engine. */
export interface VideoSettings {
  readonly prompt: string;
  readonly mode: VideoMode;
  /** The still to animate (`image` mode): media of the account. */
  readonly imageMediaId: string | null;
  readonly durationSeconds: number;
  readonly resolution: string;
  readonly aspectRatio: string;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly seed: number;
  readonly elementIds: readonly string[];
}

/** What the engine is given besides the settings. */
export interface VideoInputs {
  readonly elements: readonly ElementPicture[];
  /** The still to animate in `image` mode. */
  readonly image: Buffer | null;
}

const fields = {
  prompt: { type: 'string', required: true, description: 'What happens in the video.' },
  imageMediaId: { type: 'id', description: 'Image-to-video when set: an image of the account.' },
  durationSeconds: { type: 'int', min: 1, max: 3600, description: 'Length in seconds.' },
  resolution: { type: 'string', description: 'e.g. "720p"; see the model’s capabilities.' },
  aspectRatio: { type: 'string', description: 'e.g. "16:9".' },
  fps: { type: 'int', min: 1, max: 240, description: 'Frames per second the format offers.' },
  seed: seedField,
  elementIds: {
    type: 'idList',
    description: 'Elements, from the element list, to put in the scene.',
  },
} as const satisfies FieldTable;

/**
 * Checks a raw video request against the model's capability matrix: the resolution and aspect
 * ratio pick a format, which allows its own frame rates and duration range.
 */
export function validateVideo(
  model: VideoModel,
  raw: Readonly<Record<string, unknown>>,
  randomSeed: () => number,
) {
  const caps = model.capabilities;
  const read = new SettingsReader(raw, fields);
  const prompt = read.text('prompt', caps.maxPromptLength);
  const imageMediaId = read.id('imageMediaId') ?? null;
  const duration = read.int('durationSeconds');
  const resolution = read.string('resolution');
  const aspectRatio = read.string('aspectRatio');
  const fps = read.int('fps');
  const seed = read.int('seed') ?? randomSeed();
  const elementIds = read.idList('elementIds');

  const mode: VideoMode = imageMediaId === null ? 'text' : 'image';
  if (!caps.modes.includes(mode)) {
    read.unsupported(
      mode === 'image' ? 'imageMediaId' : 'prompt',
      `${mode}-to-video is not offered by this model`,
      caps.modes,
    );
  }
  const format = pickFormat(caps.formats, resolution, aspectRatio, read);
  const durationSeconds =
    duration ??
    Math.min(
      Math.max(caps.defaultDurationSeconds, format?.minDurationSeconds ?? 1),
      format?.maxDurationSeconds ?? caps.defaultDurationSeconds,
    );
  if (
    format !== undefined &&
    (durationSeconds < format.minDurationSeconds || durationSeconds > format.maxDurationSeconds)
  ) {
    read.unsupported(
      'durationSeconds',
      `${format.resolution} ${format.aspectRatio} allows ${format.minDurationSeconds} to ${format.maxDurationSeconds} seconds`,
      { min: format.minDurationSeconds, max: format.maxDurationSeconds },
    );
  }
  if (format !== undefined && fps !== undefined && !format.fps.includes(fps)) {
    read.unsupported(
      'fps',
      `${format.resolution} ${format.aspectRatio} offers ${format.fps.join(', ')} fps`,
      format.fps,
    );
  }
  if (elementIds.length > caps.maxElements) {
    read.unsupported('elementIds', `at most ${caps.maxElements} elements`, {
      maxElements: caps.maxElements,
    });
  }
  return read.result<VideoSettings>(() => ({
    prompt,
    mode,
    imageMediaId,
    durationSeconds,
    resolution: format!.resolution,
    aspectRatio: format!.aspectRatio,
    width: format!.width,
    height: format!.height,
    fps: fps ?? format!.fps[0]!,
    seed,
    elementIds,
  }));
}

function pickFormat(
  formats: readonly VideoFormat[],
  resolution: string | undefined,
  aspectRatio: string | undefined,
  read: SettingsReader<typeof fields>,
): VideoFormat | undefined {
  const matching = formats.filter(
    (f) =>
      (resolution === undefined || f.resolution === resolution) &&
      (aspectRatio === undefined || f.aspectRatio === aspectRatio),
  );
  if (matching.length > 0) return matching[0];
  const offered = formats.map((f) => ({
    resolution: f.resolution,
    aspectRatio: f.aspectRatio,
    fps: f.fps,
    durationSeconds: { min: f.minDurationSeconds, max: f.maxDurationSeconds },
  }));
  const field =
    resolution !== undefined && !formats.some((f) => f.resolution === resolution)
      ? 'resolution'
      : 'aspectRatio';
  const asked = [resolution, aspectRatio].filter((v) => v !== undefined).join(' ');
  read.unsupported(field, `${asked} is not offered by this model`, offered);
  return undefined;
}

/** Videos: priced per second. */
export const videoKind: KindModule<'video', VideoSettings, VideoInputs> = {
  kind: 'video',
  names: { mutation: 'generateVideo', inputType: 'GenerateVideoInput', tool: 'generate_video' },
  title: 'Generate a video',
  summary:
    'a video generation (H.264 MP4): from the prompt, or camera motion over an uploaded image',
  fields,
  validate: validateVideo,
  async resolve(_model, settings, references) {
    await references.elements(settings.elementIds, 'elementIds');
    if (settings.imageMediaId !== null) {
      await references.media(settings.imageMediaId, 'image', 'imageMediaId');
    }
    return { settings, units: settings.durationSeconds };
  },
  async load(settings, loader) {
    const elements = await loader.elementPictures(settings.elementIds, 'elementIds');
    const image =
      settings.imageMediaId === null
        ? null
        : await loader.mediaBytes(settings.imageMediaId, 'imageMediaId');
    return { elements, image };
  },
};
