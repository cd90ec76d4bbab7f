import type { ElementDefinition } from './element.ts';
import type { ImageSize, ModelDefinition, VideoFormat } from './model.ts';

/**
 * The catalogue a fresh install serves. The image models are a procedural renderer (shapes
 * and gradients derived from the prompt and seed), not a neural network: they need no weights
 * and no network, and say so. Operators add or override models with `MODELS`.
 */
const sketchSizes: readonly ImageSize[] = [
  { width: 1024, height: 1024, aspectRatio: '1:1', maxCount: 4 },
  { width: 512, height: 512, aspectRatio: '1:1', maxCount: 4 },
  { width: 1024, height: 576, aspectRatio: '16:9', maxCount: 2 },
  { width: 576, height: 1024, aspectRatio: '9:16', maxCount: 2 },
  { width: 768, height: 1024, aspectRatio: '3:4', maxCount: 2 },
  { width: 1024, height: 768, aspectRatio: '4:3', maxCount: 2 },
];

function videoFormat(
  resolution: string,
  aspectRatio: string,
  width: number,
  height: number,
  fps: readonly number[],
  maxDurationSeconds: number,
): VideoFormat {
  return { resolution, aspectRatio, width, height, fps, minDurationSeconds: 1, maxDurationSeconds };
}

export const builtinModels: readonly ModelDefinition[] = [
  {
    modelId: 'mdl_atelier-sketch',
    name: 'Atelier Sketch (procedural)',
    kind: 'image',
    status: 'ready',
    description:
      'A built-in procedural renderer: abstract compositions of shapes and gradients derived from the prompt and seed. Deterministic, instant, no model weights.',
    engine: 'procedural-image',
    engineOptions: {},
    access: { kind: 'public' },
    capabilities: {
      sizes: sketchSizes,
      formats: ['png', 'jpeg', 'webp'],
      maxElements: 4,
      maxPromptLength: 2000,
    },
    pricing: { unit: 'image', credits: 1, per: 1, category: null },
  },
  {
    modelId: 'mdl_atelier-studio',
    name: 'Atelier Studio (procedural, high resolution)',
    kind: 'image',
    status: 'ready',
    description:
      'The procedural renderer at up to 2048x2048, with more detail. For admin accounts.',
    engine: 'procedural-image',
    engineOptions: { detail: 2 },
    access: { kind: 'roles', roles: ['admin'] },
    capabilities: {
      sizes: [
        { width: 2048, height: 2048, aspectRatio: '1:1', maxCount: 2 },
        { width: 2048, height: 1152, aspectRatio: '16:9', maxCount: 1 },
        ...sketchSizes,
      ],
      formats: ['png', 'webp'],
      maxElements: 6,
      maxPromptLength: 4000,
    },
    pricing: { unit: 'image', credits: 4, per: 1, category: null },
  },
  {
    modelId: 'mdl_atelier-poster',
    name: 'Atelier Poster (procedural)',
    kind: 'image',
    status: 'maintenance',
    description: 'Poster layouts. Under maintenance: listed, not accepting submissions.',
    engine: 'procedural-image',
    engineOptions: {},
    access: { kind: 'public' },
    capabilities: { sizes: sketchSizes, formats: ['png'], maxElements: 2, maxPromptLength: 2000 },
    pricing: { unit: 'image', credits: 2, per: 1, category: null },
  },
  {
    modelId: 'mdl_atelier-motion',
    name: 'Atelier Motion (procedural video)',
    kind: 'video',
    status: 'ready',
    description:
      'Text-to-video: an animated procedural scene from the prompt and seed. Image-to-video: slow camera motion over your image. H.264 MP4, no model weights.',
    engine: 'procedural-video',
    engineOptions: {},
    access: { kind: 'public' },
    capabilities: {
      modes: ['text', 'image'],
      formats: [
        videoFormat('720p', '16:9', 1280, 720, [24, 30], 10),
        videoFormat('720p', '9:16', 720, 1280, [24, 30], 10),
        videoFormat('720p', '1:1', 720, 720, [24, 30], 10),
        videoFormat('480p', '16:9', 854, 480, [24, 30], 20),
        videoFormat('480p', '1:1', 480, 480, [24, 30], 20),
        videoFormat('1080p', '16:9', 1920, 1080, [24], 5),
      ],
      defaultDurationSeconds: 5,
      maxElements: 4,
      maxPromptLength: 2000,
    },
    pricing: { unit: 'second', credits: 2, per: 1, category: null },
  },
  {
    modelId: 'mdl_atelier-voice',
    name: 'Atelier Voice (eSpeak NG)',
    kind: 'speech',
    status: 'ready',
    description:
      'Formant speech synthesis by eSpeak NG in about 100 languages: clear and robotic, instant, no model weights. listVoiceModels shows the voices.',
    engine: 'espeak',
    engineOptions: {},
    access: { kind: 'public' },
    capabilities: {
      formats: ['mp3', 'wav', 'ogg'],
      maxTextLength: 20_000,
      speed: { min: 0.5, max: 2 },
      pitch: { min: 0.5, max: 2 },
    },
    pricing: { unit: 'character', credits: 1, per: 100, category: null },
  },
  {
    modelId: 'mdl_atelier-avatar',
    name: 'Atelier Talking Portrait',
    kind: 'avatar',
    status: 'ready',
    description:
      'Your avatar portrait with a mouth that opens and closes with the speech: a script spoken by an eSpeak NG voice, or your uploaded audio. H.264 + AAC MP4.',
    engine: 'talking-portrait',
    engineOptions: {},
    access: { kind: 'public' },
    capabilities: {
      resolutions: [
        { resolution: '512p', width: 512, height: 512 },
        { resolution: '720p', width: 720, height: 720 },
      ],
      fps: 25,
      maxScriptLength: 5000,
      maxAudioSeconds: 300,
      charactersPerSecond: 15,
    },
    pricing: { unit: 'second', credits: 1, per: 1, category: null },
  },
];

const createdAt = new Date('2026-11-01T00:00:00Z');

function libraryElement(
  elementId: string,
  kind: ElementDefinition['kind'],
  name: string,
  description: string,
  svg: string,
): ElementDefinition {
  return {
    elementId,
    kind,
    name,
    description,
    accountId: null,
    svg,
    previewMediaId: null,
    createdAt,
  };
}

/** The shared elements library; their pictures are composited by the image engine. */
export const builtinElements: readonly ElementDefinition[] = [
  libraryElement(
    'elm_sun',
    'object',
    'Sun',
    'A bright sun disc with rays.',
    `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256"><g stroke="#ffb000" stroke-width="14" stroke-linecap="round">${Array.from({ length: 12 }, (_, i) => `<line x1="128" y1="20" x2="128" y2="52" transform="rotate(${i * 30} 128 128)"/>`).join('')}</g><circle cx="128" cy="128" r="62" fill="#ffd23f"/></svg>`,
  ),
  libraryElement(
    'elm_cat',
    'character',
    'Cat',
    'A sitting black cat, seen from the front.',
    `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256"><path d="M70 90 L86 30 L112 76 L144 76 L170 30 L186 90 Z" fill="#1b1b1f"/><ellipse cx="128" cy="110" rx="62" ry="50" fill="#1b1b1f"/><ellipse cx="128" cy="196" rx="74" ry="56" fill="#1b1b1f"/><circle cx="104" cy="106" r="10" fill="#9be36d"/><circle cx="152" cy="106" r="10" fill="#9be36d"/><path d="M196 210 q44 -10 30 -60" stroke="#1b1b1f" stroke-width="14" fill="none" stroke-linecap="round"/></svg>`,
  ),
  libraryElement(
    'elm_house',
    'object',
    'House',
    'A small house with a red roof.',
    `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256"><rect x="56" y="120" width="144" height="110" fill="#f4e9d8" stroke="#5a4634" stroke-width="6"/><path d="M40 126 L128 46 L216 126 Z" fill="#c8372d"/><rect x="112" y="170" width="36" height="60" fill="#5a4634"/><rect x="72" y="146" width="28" height="28" fill="#7fb7e6"/><rect x="156" y="146" width="28" height="28" fill="#7fb7e6"/></svg>`,
  ),
  libraryElement(
    'elm_night-sky',
    'scene',
    'Night sky',
    'A deep blue night with stars, laid under the composition.',
    `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256"><defs><linearGradient id="n" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#050a30"/><stop offset="1" stop-color="#1c2f6b"/></linearGradient></defs><rect width="256" height="256" fill="url(#n)"/>${[
      [30, 40],
      [90, 22],
      [150, 60],
      [210, 30],
      [60, 110],
      [190, 120],
      [120, 150],
      [230, 190],
      [20, 200],
    ]
      .map(([x, y]) => `<circle cx="${x}" cy="${y}" r="2.5" fill="#fff"/>`)
      .join('')}</svg>`,
  ),
  libraryElement(
    'elm_watercolor',
    'style',
    'Watercolor',
    'Soft, washed-out colours with blurred edges.',
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#b9d7ea"/></svg>',
  ),
];
