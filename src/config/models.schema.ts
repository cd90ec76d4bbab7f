import { z } from 'zod';
import type { ModelDefinition } from '../domain/model.ts';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const ratio = z.string().regex(/^\d+:\d+$/, 'like "16:9"');
const even = int(2, 8192).refine((n) => n % 2 === 0, 'must be even (H.264 4:2:0)');
const range = (min: number, max: number) =>
  z.object({ min: z.number().min(min).max(max), max: z.number().min(min).max(max) });

const imageCapabilities = z.object({
  sizes: z
    .array(
      z.object({
        width: int(1, 16_384),
        height: int(1, 16_384),
        aspectRatio: ratio,
        maxCount: int(1, 100),
      }),
    )
    .min(1),
  formats: z.array(z.enum(['png', 'jpeg', 'webp'])).min(1),
  maxElements: int(0, 16).default(4),
  maxPromptLength: int(1, 20_000).default(2000),
});

const videoCapabilities = z.object({
  modes: z
    .array(z.enum(['text', 'image']))
    .min(1)
    .default(['text', 'image']),
  formats: z
    .array(
      z.object({
        resolution: z.string().min(1),
        aspectRatio: ratio,
        width: even,
        height: even,
        fps: z.array(int(1, 120)).min(1),
        minDurationSeconds: int(1, 3600).default(1),
        maxDurationSeconds: int(1, 3600),
      }),
    )
    .min(1),
  defaultDurationSeconds: int(1, 3600).default(5),
  maxElements: int(0, 16).default(4),
  maxPromptLength: int(1, 20_000).default(2000),
});

const speechCapabilities = z.object({
  formats: z.array(z.enum(['mp3', 'wav', 'ogg'])).min(1),
  maxTextLength: int(1, 200_000).default(20_000),
  speed: range(0.1, 10).default({ min: 0.5, max: 2 }),
  pitch: range(0.1, 10).default({ min: 0.5, max: 2 }),
});

const avatarCapabilities = z.object({
  resolutions: z
    .array(z.object({ resolution: z.string().min(1), width: even, height: even }))
    .min(1),
  fps: int(1, 60).default(25),
  maxScriptLength: int(1, 100_000).default(5000),
  maxAudioSeconds: int(1, 3600).default(300),
  charactersPerSecond: z.number().positive().default(15),
});

/** What every kind of model has; see {@link ModelDefinition}. */
const common = {
  modelId: z.string().regex(/^mdl_[A-Za-z0-9_-]{1,60}$/, 'must look like mdl_my-model'),
  name: z.string().min(1),
  status: z.enum(['ready', 'maintenance', 'deprecated']).default('ready'),
  description: z.string().nullable().default(null),
  engine: z.string().min(1),
  engineOptions: z.record(z.string(), z.unknown()).default({}),
  maxRunSeconds: int(1, 604_800).optional(), // up to 7 days
  access: z
    .discriminatedUnion('kind', [
      z.object({ kind: z.literal('public') }),
      z.object({ kind: z.literal('roles'), roles: z.array(z.enum(['user', 'admin'])).min(1) }),
      z.object({ kind: z.literal('accounts'), accountIds: z.array(z.string()).min(1) }),
    ])
    .default({ kind: 'public' }),
  pricing: z.object({
    unit: z.enum(['image', 'second', 'character', 'request']),
    credits: int(0, 1_000_000),
    per: int(1, 1_000_000).default(1),
    category: z.string().nullable().default(null),
  }),
};

/** A model in `MODELS`: the shape of {@link ModelDefinition}, with defaults for the optional. */
const modelSchema = z.discriminatedUnion('kind', [
  z.object({ ...common, kind: z.literal('image'), capabilities: imageCapabilities }),
  z.object({ ...common, kind: z.literal('video'), capabilities: videoCapabilities }),
  z.object({ ...common, kind: z.literal('speech'), capabilities: speechCapabilities }),
  z.object({ ...common, kind: z.literal('avatar'), capabilities: avatarCapabilities }),
]);

export const modelsSchema = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // reported by the schema as "expected array"
  }
}, z.array(modelSchema));
