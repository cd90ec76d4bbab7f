/**
 * An animated procedural scene: a gradient in the prompt's colours, soft glows and shapes that
 * drift, turn and pulse, and element pictures travelling across. Everything is drawn from
 * prompt and seed, and every frame is a pure function of its time, so the same job always
 * gives the same frames and a frame can be drawn without drawing the ones before it.
 */

import { paletteOf, seededRandom } from '../procedural-image/palette.ts';
import {
  type AlphaMask,
  blendMask,
  boxDistance,
  circleDistance,
  fillShape,
  glowMask,
  hslToRgb,
  linearGradient,
  type PlacedShape,
  type Rgb,
  type RgbFrame,
  ringDistance,
  triangleDistance,
} from './raster.ts';

type ShapeKind = 'circle' | 'ring' | 'box' | 'triangle';

interface ShapePlan {
  readonly kind: ShapeKind;
  readonly colour: Rgb;
  readonly opacity: number;
  /** Radius in pixels before pulsing. */
  readonly size: number;
  /** Box height over width, ring thickness over radius. */
  readonly aspect: number;
  readonly x: number;
  readonly y: number;
  /** Drift in pixels a second; the shape wraps around the frame's edges. */
  readonly vx: number;
  readonly vy: number;
  readonly orbit: number;
  readonly orbitSpeed: number;
  readonly orbitPhase: number;
  readonly angle: number;
  /** Radians a second. */
  readonly spin: number;
  readonly pulse: number;
  readonly pulseSpeed: number;
  readonly pulsePhase: number;
}

/** A large soft light drifting slowly behind the shapes; it breathes in opacity, not size. */
interface GlowPlan {
  readonly mask: AlphaMask;
  readonly colour: Rgb;
  readonly opacity: number;
  readonly x: number;
  readonly y: number;
  readonly vx: number;
  readonly vy: number;
  readonly orbit: number;
  readonly orbitSpeed: number;
  readonly orbitPhase: number;
  readonly pulseSpeed: number;
  readonly pulsePhase: number;
}

/** Where an element picture goes: a straight crossing with a gentle bob. */
export interface ElementPath {
  readonly fromX: number;
  readonly toX: number;
  readonly y: number;
  readonly bob: number;
  readonly bobSpeed: number;
  readonly bobPhase: number;
}

export interface ScenePlan {
  readonly width: number;
  readonly height: number;
  /** The static gradient every frame starts from. */
  readonly background: Buffer;
  readonly glows: readonly GlowPlan[];
  readonly shapes: readonly ShapePlan[];
  /** One path per element picture, in the order given. */
  readonly elementPaths: readonly ElementPath[];
}

/** Plans the scene of a prompt and seed; `elementSizes` are the element pictures' sizes. */
export function planScene(
  prompt: string,
  seed: number,
  width: number,
  height: number,
  elementSizes: readonly { readonly width: number; readonly height: number }[],
): ScenePlan {
  const random = seededRandom('video', prompt, seed);
  const hues = paletteOf(prompt);
  const pick = (): number => hues[Math.floor(random() * hues.length)]!;
  const unit = Math.min(width, height);

  const background = linearGradient(
    width,
    height,
    hslToRgb(pick(), 0.55 + random() * 0.3, 0.12 + random() * 0.15),
    hslToRgb(pick() + 40 * random(), 0.6 + random() * 0.3, 0.45 + random() * 0.25),
    random() * Math.PI * 2,
  );

  const glows = Array.from({ length: 2 + Math.floor(random() * 2) }, (): GlowPlan => {
    const mask = glowMask(unit * (0.3 + random() * 0.2));
    return {
      mask,
      colour: hslToRgb(pick() + (random() - 0.5) * 30, 0.5 + random() * 0.45, 0.6 + random() * 0.3),
      opacity: 0.25 + random() * 0.25,
      x: random() * width - mask.side / 2,
      y: random() * height - mask.side / 2,
      vx: (random() - 0.5) * unit * 0.05,
      vy: (random() - 0.5) * unit * 0.03,
      orbit: unit * (0.02 + random() * 0.06),
      orbitSpeed: 0.1 + random() * 0.4,
      orbitPhase: random() * Math.PI * 2,
      pulseSpeed: 0.5 + random(),
      pulsePhase: random() * Math.PI * 2,
    };
  });

  const count = 10 + Math.floor(random() * 9);
  const kinds: readonly ShapeKind[] = ['circle', 'ring', 'box', 'triangle'];
  const shapes: ShapePlan[] = [];
  for (let i = 0; i < count; i++) {
    const kind = kinds[Math.floor(random() * kinds.length)]!;
    shapes.push(planShape(kind, unit * (0.03 + random() * 0.13), 0.35 + random() * 0.5));
  }
  // Big shapes behind small ones, so nothing small is hidden for long.
  shapes.sort((a, b) => b.size - a.size);

  const elementPaths = elementSizes.map((size, i): ElementPath => {
    const rightward = (i + Math.floor(random() * 2)) % 2 === 0;
    const margin = width * 0.04;
    const left = margin;
    const right = Math.max(margin, width - margin - size.width);
    const lane = (i + 0.5 + (random() - 0.5) * 0.6) / Math.max(1, elementSizes.length);
    return {
      fromX: rightward ? left : right,
      toX: rightward ? right : left,
      y: (height - size.height) * Math.min(0.9, Math.max(0.1, lane)),
      bob: unit * (0.015 + random() * 0.03),
      bobSpeed: 1 + random() * 2,
      bobPhase: random() * Math.PI * 2,
    };
  });

  return { width, height, background, glows, shapes, elementPaths };

  function planShape(kind: ShapeKind, size: number, opacity: number): ShapePlan {
    return {
      kind,
      colour: hslToRgb(
        pick() + (random() - 0.5) * 30,
        0.5 + random() * 0.45,
        0.35 + random() * 0.45,
      ),
      opacity,
      size,
      aspect: kind === 'ring' ? 0.12 + random() * 0.2 : 0.3 + random() * 0.7,
      x: random() * width,
      y: random() * height,
      vx: (random() - 0.5) * unit * 0.12,
      vy: (random() - 0.5) * unit * 0.08,
      orbit: unit * (0.01 + random() * 0.06),
      orbitSpeed: 0.3 + random(),
      orbitPhase: random() * Math.PI * 2,
      angle: random() * Math.PI * 2,
      spin: (random() - 0.5) * 1.6,
      pulse: random() * 0.2,
      pulseSpeed: 1 + random() * 3,
      pulsePhase: random() * Math.PI * 2,
    };
  }
}

/** Draws glows and shapes of the scene at `seconds` into a frame that holds the background. */
export function drawShapes(frame: RgbFrame, plan: ScenePlan, seconds: number): void {
  for (const glow of plan.glows) {
    const orbitAngle = glow.orbitSpeed * seconds + glow.orbitPhase;
    const breath = 0.75 + 0.25 * Math.sin(glow.pulseSpeed * seconds + glow.pulsePhase);
    blendMask(
      frame,
      glow.mask,
      Math.round(glow.x + glow.vx * seconds + glow.orbit * Math.cos(orbitAngle)),
      Math.round(glow.y + glow.vy * seconds + glow.orbit * Math.sin(orbitAngle)),
      glow.colour,
      glow.opacity * breath,
    );
  }
  for (const shape of plan.shapes) {
    const placed = placeShape(shape, plan.width, plan.height, seconds);
    fillShape(frame, placed, shape.colour, shape.opacity);
  }
}

/** The top-left corner of an element picture at `seconds`, `progress` (0..1) along its path. */
export function elementPosition(
  path: ElementPath,
  progress: number,
  seconds: number,
): { readonly left: number; readonly top: number } {
  // Ease in and out, so pictures start and stop gently rather than at constant speed.
  const eased = (1 - Math.cos(Math.PI * progress)) / 2;
  return {
    left: Math.round(path.fromX + (path.toX - path.fromX) * eased),
    top: Math.round(path.y + path.bob * Math.sin(path.bobSpeed * seconds + path.bobPhase)),
  };
}

function placeShape(shape: ShapePlan, width: number, height: number, t: number): PlacedShape {
  const size = shape.size * (1 + shape.pulse * Math.sin(shape.pulseSpeed * t + shape.pulsePhase));
  const angle = shape.angle + shape.spin * t;
  const softness = 1;
  let distance: PlacedShape['distance'];
  let reach = size;
  switch (shape.kind) {
    case 'circle':
      distance = circleDistance(size);
      break;
    case 'ring':
      distance = ringDistance(size, size * shape.aspect);
      reach = size * (1 + shape.aspect / 2);
      break;
    case 'box': {
      const hy = size * shape.aspect;
      distance = boxDistance(size, hy, Math.min(size, hy) * 0.2, angle);
      reach = Math.hypot(size, hy);
      break;
    }
    case 'triangle':
      distance = triangleDistance(size, angle);
      break;
  }
  // A shape wraps once it has drifted fully off one edge, re-entering from the other, so
  // the frame never empties however long the video.
  const margin = reach + softness;
  const orbitAngle = shape.orbitSpeed * t + shape.orbitPhase;
  const x = shape.x + shape.vx * t + shape.orbit * Math.cos(orbitAngle);
  const y = shape.y + shape.vy * t + shape.orbit * Math.sin(orbitAngle);
  return {
    cx: wrap(x, width, margin),
    cy: wrap(y, height, margin),
    reach,
    distance,
    softness,
  };
}

function wrap(value: number, extent: number, margin: number): number {
  const span = extent + 2 * margin;
  return ((((value + margin) % span) + span) % span) - margin;
}
