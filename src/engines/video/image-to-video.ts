import type { OverlayOptions } from 'sharp';
import { sharp } from '../../shared/sharp.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import { seededRandom } from '../procedural-image/palette.ts';
import { type CameraPlan, maxZoom, planCamera, sampleView, viewAt } from './camera.ts';
import { encodeMp4, nextTurn } from './encode-mp4.ts';
import type { RgbFrame } from './raster.ts';
import { frameCountOf, type RenderContext, type VideoJob } from './video-job.ts';

/** A video made by moving a camera over a still. */
export interface ImageVideoJob extends VideoJob {
  /** Any image sharp reads; it is cropped to the frame's aspect ratio, never stretched. */
  readonly image: Buffer;
}

/**
 * Renders a slow zoom or pan (chosen from prompt and seed) over the image, with the element
 * pictures placed on it first, as an H.264 MP4 of exactly `durationSeconds × fps` frames.
 *
 * Frames are resampled here with sub-pixel positions and streamed as raw RGB rather than
 * left to ffmpeg's `zoompan`, which rounds its crop to whole pixels (a visible judder on a
 * slow move). Measured for 5 s of 720p on 2 cores: this path about 2 s, `zoompan` 2.5 s,
 * and `zoompan` over the usual 4× upscale that hides the judder 5.3 s.
 */
export async function renderImageToVideo(
  ffmpeg: Ffmpeg,
  job: ImageVideoJob,
  context: RenderContext,
): Promise<Buffer> {
  const frameCount = frameCountOf(job);
  const source = await prepareSource(job);
  context.signal.throwIfAborted();
  const camera = planCamera(job.prompt, job.seed);
  return encodeMp4(
    ffmpeg,
    {
      width: job.width,
      height: job.height,
      fps: job.fps,
      frames: cameraFrames(source, camera, job, frameCount, context.signal),
      frameCount,
    },
    context,
  );
}

async function* cameraFrames(
  source: RgbFrame,
  camera: CameraPlan,
  job: ImageVideoJob,
  frameCount: number,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  const frame = Buffer.allocUnsafe(job.width * job.height * 3); // see `Mp4Input.frames`
  for (let index = 0; index < frameCount; index++) {
    await nextTurn(signal);
    const progress = frameCount > 1 ? index / (frameCount - 1) : 0;
    const view = viewAt(camera, source.width, source.height, progress);
    yield sampleView(source, view, job.width, job.height, frame);
  }
}

/**
 * The image cropped to the frame's aspect at `maxZoom` times the frame size, with the element
 * pictures composited on it, as raw RGB. Elements stay inside the middle of the picture,
 * which every move keeps in view.
 */
async function prepareSource(job: ImageVideoJob): Promise<RgbFrame> {
  const width = Math.round(job.width * maxZoom);
  const height = Math.round(job.height * maxZoom);
  const random = seededRandom('image-video', job.prompt, job.seed);
  const side = Math.round(Math.min(width, height) * 0.22);
  const layers: OverlayOptions[] = await Promise.all(
    job.elements.map(async (picture) => ({
      input: await sharp(picture)
        .resize(side, side, { fit: 'contain', background: '#0000' })
        .png()
        .toBuffer(),
      left: Math.round(width * 0.15 + random() * (width * 0.7 - side)),
      top: Math.round(height * 0.15 + random() * (height * 0.7 - side)),
    })),
  );
  const { data, info } = await sharp(job.image)
    .rotate() // honour EXIF orientation, as a viewer would
    .flatten({ background: '#000000' })
    .resize(width, height, { fit: 'cover' })
    .composite(layers)
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`expected RGB, sharp gave ${info.channels} channels`);
  return { width, height, data };
}
