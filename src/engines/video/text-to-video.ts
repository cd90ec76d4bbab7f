import { sharp } from '../../shared/sharp.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import { encodeMp4, nextTurn } from './encode-mp4.ts';
import type { RgbaSprite, RgbFrame } from './raster.ts';
import { blitSprite } from './raster.ts';
import { drawShapes, elementPosition, planScene, type ScenePlan } from './scenes.ts';
import { frameCountOf, type RenderContext, type VideoJob } from './video-job.ts';

/**
 * Renders the procedural scene of a prompt and seed as an H.264 MP4 of exactly
 * `durationSeconds × fps` frames. Frames are drawn one at a time as ffmpeg asks for them, so
 * memory holds a frame or two whatever the duration, and a slow encoder slows the drawing.
 */
export async function renderTextToVideo(
  ffmpeg: Ffmpeg,
  job: VideoJob,
  context: RenderContext,
): Promise<Buffer> {
  const frameCount = frameCountOf(job);
  const unit = Math.min(job.width, job.height);
  const sprites = await Promise.all(
    job.elements.map((picture, i) =>
      loadSprite(picture, Math.round(unit * (0.22 + 0.04 * (i % 4)))),
    ),
  );
  context.signal.throwIfAborted();
  const plan = planScene(job.prompt, job.seed, job.width, job.height, sprites);
  return encodeMp4(
    ffmpeg,
    {
      width: job.width,
      height: job.height,
      fps: job.fps,
      frames: sceneFrames(plan, sprites, frameCount, job.fps, context.signal),
      frameCount,
    },
    context,
  );
}

async function* sceneFrames(
  plan: ScenePlan,
  sprites: readonly RgbaSprite[],
  frameCount: number,
  fps: number,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  // One buffer for every frame (see `Mp4Input.frames`).
  const frame: RgbFrame = {
    width: plan.width,
    height: plan.height,
    data: Buffer.allocUnsafe(plan.background.length),
  };
  for (let index = 0; index < frameCount; index++) {
    await nextTurn(signal);
    const seconds = index / fps;
    plan.background.copy(frame.data);
    drawShapes(frame, plan, seconds);
    const progress = frameCount > 1 ? index / (frameCount - 1) : 0;
    sprites.forEach((sprite, i) => {
      const { left, top } = elementPosition(plan.elementPaths[i]!, progress, seconds);
      blitSprite(frame, sprite, left, top);
    });
    yield frame.data;
  }
}

/** An element picture fitted in a `side`-pixel square, transparent around it. */
async function loadSprite(picture: Buffer, side: number): Promise<RgbaSprite> {
  const { data, info } = await sharp(picture)
    .resize(side, side, { fit: 'contain', background: '#0000' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}
