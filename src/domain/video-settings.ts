import type { VideoFormat, VideoMode, VideoModel } from './model.ts';
import { priceOf } from './model.ts';
import { SettingsReader, type Validated } from './settings-input.ts';

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

/**
 * Checks a raw video request against the model's capability matrix: the resolution and aspect
 * ratio pick a format, which allows its own frame rates and duration range.
 */
export function validateVideoSettings(
  model: VideoModel,
  raw: Readonly<Record<string, unknown>>,
  randomSeed: () => number,
): Validated<VideoSettings> {
  const caps = model.capabilities;
  const read = new SettingsReader(raw);
  const prompt = read.text('prompt', caps.maxPromptLength);
  const imageMediaId = read.id('imageMediaId') ?? null;
  const duration = read.int('durationSeconds', 1, 3600);
  const resolution = read.string('resolution');
  const aspectRatio = read.string('aspectRatio');
  const fps = read.int('fps', 1, 240);
  const seed = read.seed(randomSeed);
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
  return read.result(() => ({
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
  read: SettingsReader,
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

/** Credits a validated request costs: per second of video under the usual pricing. */
export function priceVideo(model: VideoModel, settings: VideoSettings): number {
  return priceOf(model, settings.durationSeconds);
}
