import { sharp } from '../../shared/sharp.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import { encodeMp4, nextTurn } from './encode-mp4.ts';
import { frameCountOf, type RenderContext } from './video-job.ts';

/** A talking portrait: a still whose mouth opens and closes with the soundtrack. */
export interface AvatarJob {
  /** Any image sharp reads; it is cropped to the frame's aspect ratio, never stretched. */
  readonly portrait: Buffer;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  /** Mouth openness 0..1 per frame; its length is the frame count. */
  readonly mouth: Float32Array;
  /** The soundtrack, WAV bytes (mono 16-bit); the video is exactly as long as the frames. */
  readonly audioWav: Buffer;
}

/**
 * Openness steps drawn in advance. Nine puts 0, ½ and 1 on exact steps; finer steps are not
 * visible at speaking speed (a mouth moves a step or two per frame).
 */
const mouthLevels = 9;

/**
 * Where the mouth goes, as fractions of the frame. Atelier's portraits are abstract pictures
 * with no face to find, so the mouth sits where a centred head-and-shoulders portrait has it:
 * the middle across, about two thirds down. Its width is a fraction of the shorter side, so it
 * reads the same in square, landscape and upright frames.
 */
const mouthPlace = { x: 0.5, y: 0.68, width: 0.2 } as const;

/**
 * Renders the portrait with a mouth that follows `mouth` frame by frame, with the soundtrack
 * as AAC, in an MP4 whose video and audio both last `mouth.length / fps` seconds.
 *
 * The portrait is decoded and scaled once; each openness level is composited once into a
 * small patch; a frame is then a copy of the portrait with one patch copied over it, a
 * fraction of a millisecond at 720p.
 */
export async function renderAvatarVideo(
  ffmpeg: Ffmpeg,
  job: AvatarJob,
  context: RenderContext,
): Promise<Buffer> {
  const frameCount = frameCountOf({ ...job, durationSeconds: job.mouth.length / job.fps });
  const { data: base, info } = await sharp(job.portrait)
    .rotate() // honour EXIF orientation, as a viewer would
    .flatten({ background: '#000000' })
    .resize(job.width, job.height, { fit: 'cover' })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`expected RGB, sharp gave ${info.channels} channels`);
  const region = mouthRegion(job.width, job.height);
  const patches = await Promise.all(
    Array.from({ length: mouthLevels }, (_, level) =>
      sharp(base, { raw: { width: job.width, height: job.height, channels: 3 } })
        .extract(region)
        .composite([{ input: Buffer.from(mouthSvg(region, level / (mouthLevels - 1))) }])
        .removeAlpha()
        .raw()
        .toBuffer(),
    ),
  );
  context.signal.throwIfAborted();
  return encodeMp4(
    ffmpeg,
    {
      width: job.width,
      height: job.height,
      fps: job.fps,
      frames: talkingFrames(base, job, region, patches, frameCount, context.signal),
      frameCount,
      audioWav: job.audioWav,
    },
    context,
  );
}

interface Region {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

async function* talkingFrames(
  base: Buffer,
  job: AvatarJob,
  region: Region,
  patches: readonly Buffer[],
  frameCount: number,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  const rowBytes = region.width * 3;
  const frame = Buffer.allocUnsafe(base.length); // one for every frame (see `Mp4Input.frames`)
  for (let index = 0; index < frameCount; index++) {
    await nextTurn(signal);
    const value = job.mouth[index] ?? 0;
    const openness = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
    const patch = patches[Math.round(openness * (mouthLevels - 1))]!;
    base.copy(frame);
    for (let y = 0; y < region.height; y++) {
      const at = ((region.top + y) * job.width + region.left) * 3;
      patch.copy(frame, at, y * rowBytes, (y + 1) * rowBytes);
    }
    yield frame;
  }
}

/** The box the mouth is drawn in, wide and tall enough for it fully open, inside the frame. */
function mouthRegion(width: number, height: number): Region {
  const mouthWidth = Math.min(width, height) * mouthPlace.width;
  const boxWidth = Math.min(width, Math.ceil(mouthWidth * 1.3));
  const boxHeight = Math.min(height, Math.ceil(mouthWidth * 0.9));
  return {
    left: Math.max(0, Math.min(width - boxWidth, Math.round(width * mouthPlace.x - boxWidth / 2))),
    top: Math.max(
      0,
      Math.min(height - boxHeight, Math.round(height * mouthPlace.y - boxHeight / 2)),
    ),
    width: boxWidth,
    height: boxHeight,
  };
}

/**
 * Lips around a dark opening `openness` (0..1) high, drawn in a box of the region's size:
 * closed, a thin dark line between the lips; open, teeth at the top and a tongue below. The
 * dark outline keeps the mouth legible on any colour the portrait has there.
 */
function mouthSvg(region: Region, openness: number): string {
  const w = region.width / 1.3;
  const hw = w / 2;
  const cx = region.width / 2;
  const cy = region.height / 2;
  const gap = w * (0.03 + 0.36 * openness);
  const upper = gap / 2 + w * 0.1;
  const lower = gap / 2 + w * 0.13;
  const n = (v: number): string => v.toFixed(2);
  const p = (x: number, y: number): string => `${n(cx + x)} ${n(cy + y)}`;
  const lips =
    `M${p(-hw, 0)} C${p(-hw * 0.6, -upper)} ${p(-hw * 0.25, -upper * 1.15)} ${p(0, -upper * 0.8)} ` +
    `C${p(hw * 0.25, -upper * 1.15)} ${p(hw * 0.6, -upper)} ${p(hw, 0)} ` +
    `C${p(hw * 0.6, lower)} ${p(-hw * 0.6, lower)} ${p(-hw, 0)} Z`;
  const open = (gap / 2) * 1.3;
  const inner =
    `M${p(-hw * 0.82, 0)} C${p(-hw * 0.4, -open)} ${p(hw * 0.4, -open)} ${p(hw * 0.82, 0)} ` +
    `C${p(hw * 0.4, open)} ${p(-hw * 0.4, open)} ${p(-hw * 0.82, 0)} Z`;
  const teeth = Math.min(Math.max(0, gap - w * 0.05) * 0.4, w * 0.07); // none when closed
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${region.width}" height="${region.height}">
<defs><clipPath id="m"><path d="${inner}"/></clipPath></defs>
<path d="${lips}" fill="#b5485e" stroke="#3b1119" stroke-width="${n(w * 0.025)}" stroke-linejoin="round"/>
<path d="${inner}" fill="#2b0910"/>
<g clip-path="url(#m)">
<rect x="${n(cx - hw)}" y="${n(cy - open * 0.75)}" width="${n(w)}" height="${n(teeth)}" fill="#f3eee4"/>
<ellipse cx="${n(cx)}" cy="${n(cy + gap * 0.55)}" rx="${n(hw * 0.45)}" ry="${n(gap * 0.35)}" fill="#c0566a"/>
</g></svg>`;
}
