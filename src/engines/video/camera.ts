import { seededRandom } from '../procedural-image/palette.ts';
import type { RgbFrame } from './raster.ts';

/**
 * A slow camera move over a still: a zoom in or out towards a point near the middle, or a pan
 * along one axis. The still is prepared `maxZoom` times larger than the frame so the closest
 * view still maps about one source pixel to one output pixel.
 */
export const maxZoom = 1.25;

/** How much of the source a pan shows: zoomed in enough to leave room to travel. */
const panZoom = 1.15;

export type CameraMove = 'zoom-in' | 'zoom-out' | 'pan-left' | 'pan-right' | 'pan-up' | 'pan-down';

const moves: readonly CameraMove[] = [
  'zoom-in',
  'zoom-out',
  'pan-left',
  'pan-right',
  'pan-up',
  'pan-down',
];

export interface CameraPlan {
  readonly move: CameraMove;
  /** Where zooms aim, as fractions of the source (0.5, 0.5 is the middle). */
  readonly focusX: number;
  readonly focusY: number;
}

/** A region of the source, in source pixels. */
export interface View {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

/** The move of a prompt and seed. */
export function planCamera(prompt: string, seed: number): CameraPlan {
  const random = seededRandom('camera', prompt, seed);
  return {
    move: moves[Math.floor(random() * moves.length)]!,
    focusX: 0.4 + random() * 0.2,
    focusY: 0.4 + random() * 0.2,
  };
}

/** The part of a `sourceWidth × sourceHeight` source seen at `progress` (0..1) of the move. */
export function viewAt(
  plan: CameraPlan,
  sourceWidth: number,
  sourceHeight: number,
  progress: number,
): View {
  // Ease in and out: a camera that starts and stops at full speed looks mechanical.
  const p = (1 - Math.cos(Math.PI * Math.min(1, Math.max(0, progress)))) / 2;
  const zoom =
    plan.move === 'zoom-in'
      ? 1 + (maxZoom - 1) * p
      : plan.move === 'zoom-out'
        ? maxZoom - (maxZoom - 1) * p
        : panZoom;
  const width = sourceWidth / zoom;
  const height = sourceHeight / zoom;
  const spanX = sourceWidth - width;
  const spanY = sourceHeight - height;
  let left = spanX * plan.focusX;
  let top = spanY * plan.focusY;
  if (plan.move === 'pan-left') left = spanX * (1 - p);
  if (plan.move === 'pan-right') left = spanX * p;
  if (plan.move === 'pan-up') top = spanY * (1 - p);
  if (plan.move === 'pan-down') top = spanY * p;
  return { left, top, width, height };
}

/**
 * Samples a view of an RGB source into `out` (by default a new frame), bilinearly and with sub-pixel positions:
 * whole-pixel crops make a slow move visibly judder. Done in two passes (along rows, then
 * between two rows kept from one output row to the next), which halves the work of sampling
 * four neighbours for every output pixel. Integer weights out of 256 keep it exact and fast.
 */
export function sampleView(
  source: RgbFrame,
  view: View,
  width: number,
  height: number,
  out: Buffer = Buffer.allocUnsafe(width * height * 3),
): Buffer {
  const stride = source.width * 3;
  const src = source.data;
  const columns = new Int32Array(width);
  const columnWeights = new Int32Array(width);
  const sx = view.width / width;
  for (let x = 0; x < width; x++) {
    const at = clamp(view.left + (x + 0.5) * sx - 0.5, source.width);
    const i = Math.floor(at);
    columns[x] = i * 3;
    columnWeights[x] = Math.round((at - i) * 256);
  }
  let upper = new Uint16Array(width * 3);
  let lower = new Uint16Array(width * 3);
  let upperRow = -1;
  let lowerRow = -1;
  const interpolateRow = (row: number, into: Uint16Array): void => {
    const base = row * stride;
    for (let x = 0, o = 0; x < width; x++) {
      const a = base + columns[x]!;
      const w = columnWeights[x]!;
      const v = 256 - w;
      into[o++] = src[a]! * v + src[a + 3]! * w;
      into[o++] = src[a + 1]! * v + src[a + 4]! * w;
      into[o++] = src[a + 2]! * v + src[a + 5]! * w;
    }
  };
  const sy = view.height / height;
  const rowLength = width * 3;
  for (let y = 0, o = 0; y < height; y++) {
    const at = clamp(view.top + (y + 0.5) * sy - 0.5, source.height);
    const row = Math.floor(at);
    const w = Math.round((at - row) * 256);
    const v = 256 - w;
    if (upperRow !== row) {
      if (lowerRow === row) {
        [upper, lower] = [lower, upper];
        lowerRow = -1;
      } else interpolateRow(row, upper);
      upperRow = row;
    }
    if (lowerRow !== row + 1) {
      interpolateRow(row + 1, lower);
      lowerRow = row + 1;
    }
    for (let k = 0; k < rowLength; k++) {
      out[o++] = (upper[k]! * v + lower[k]! * w + 32768) >>> 16;
    }
  }
  return out;
}

/** Keeps a sample position where it and its right (or lower) neighbour are both inside. */
function clamp(at: number, extent: number): number {
  return Math.min(Math.max(at, 0), extent - 1.0001);
}
