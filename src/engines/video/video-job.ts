/** What a procedural video is made from. */
export interface VideoJob {
  readonly prompt: string;
  readonly seed: number;
  /** Even: H.264 in 4:2:0 halves the chroma planes. */
  readonly width: number;
  /** Even, for the same reason. */
  readonly height: number;
  readonly fps: number;
  readonly durationSeconds: number;
  /** Element pictures (PNG/JPEG/WebP/SVG bytes) composited into the scene, in order. */
  readonly elements: readonly Buffer[];
}

/** The part of an engine's context a renderer uses. */
export interface RenderContext {
  /** Aborting kills ffmpeg at once; the render rejects with the signal's reason. */
  readonly signal: AbortSignal;
  /** Progress 0..1, never decreasing, 1 last. */
  reportProgress(progress: number): void;
}

/**
 * How many frames a job makes: exactly `durationSeconds × fps`, rounded, so the container
 * reports the duration asked for. Throws a RangeError on a size H.264 4:2:0 cannot take.
 */
export function frameCountOf(
  job: Pick<VideoJob, 'width' | 'height' | 'fps' | 'durationSeconds'>,
): number {
  checkFrameSize(job.width, job.height);
  if (!(job.fps > 0 && job.fps <= 120)) throw new RangeError(`fps ${job.fps} is out of range`);
  const frames = Math.round(job.durationSeconds * job.fps);
  if (!(frames >= 1)) throw new RangeError(`duration ${job.durationSeconds}s gives no frames`);
  return frames;
}

/** Throws a RangeError unless width and height are positive even integers. */
export function checkFrameSize(width: number, height: number): void {
  for (const side of [width, height]) {
    if (!Number.isInteger(side) || side < 2 || side % 2 !== 0 || side > 8192) {
      throw new RangeError(`frame size ${width}x${height} must be even integers up to 8192`);
    }
  }
}
