import { z } from 'zod';
import { defaultHealthRule } from '../domain/backends.ts';
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

const engineOptions = z.record(z.string(), z.unknown());

/** When a backend goes out of rotation and comes back; see {@link defaultHealthRule}. */
const healthRule = z
  .object({
    failuresBeforeCooldown: int(1, 1000).default(defaultHealthRule.failuresBeforeCooldown),
    cooldownSeconds: int(1, 86_400).default(defaultHealthRule.cooldownSeconds),
    probeSeconds: int(0, 86_400).default(defaultHealthRule.probeSeconds),
  })
  .prefault({});

/** One backend of a model's pool; see `BackendDefinition`. */
const backendSchema = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, 'up to 40 letters, digits, ".", "_" or "-"'),
  engine: z.string().min(1),
  engineOptions: engineOptions.default({}),
  maxConcurrent: int(1, 10_000).nullable().default(null),
  priority: int(1, 9).default(1),
  weight: int(1, 1000).default(1),
  health: healthRule,
});

/** What every kind of model has; see {@link ModelDefinition}. */
const common = {
  modelId: z.string().regex(/^mdl_[A-Za-z0-9_-]{1,60}$/, 'must look like mdl_my-model'),
  name: z.string().min(1),
  status: z.enum(['ready', 'maintenance', 'deprecated']).default('ready'),
  description: z.string().nullable().default(null),
  /** One backend: `engine` and `engineOptions`; a pool: `backends`. */
  engine: z.string().min(1).optional(),
  engineOptions: engineOptions.optional(),
  backends: z.array(backendSchema).min(1).max(32).optional(),
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

/**
 * A model in `MODELS`: the shape of {@link ModelDefinition}, with defaults for the optional.
 * It names either one `engine` (with its `engineOptions`) or a pool of `backends`, whose first
 * then stands as the model's `engine` and `engineOptions`.
 */
const modelSchema = z
  .discriminatedUnion('kind', [
    z.object({ ...common, kind: z.literal('image'), capabilities: imageCapabilities }),
    z.object({ ...common, kind: z.literal('video'), capabilities: videoCapabilities }),
    z.object({ ...common, kind: z.literal('speech'), capabilities: speechCapabilities }),
    z.object({ ...common, kind: z.literal('avatar'), capabilities: avatarCapabilities }),
  ])
  .superRefine((model, ctx) => {
    const problem = (path: PropertyKey[], message: string) =>
      ctx.addIssue({ code: 'custom', path, message });
    if (model.backends === undefined) {
      if (model.engine === undefined) problem(['engine'], 'required (or a list of backends)');
      return;
    }
    if (model.engine !== undefined) problem(['engine'], 'give engine or backends, not both');
    if (model.engineOptions !== undefined) {
      problem(['engineOptions'], "with backends, each backend's engineOptions are its own");
    }
    const seen = new Set<string>();
    model.backends.forEach((backend, i) => {
      if (seen.has(backend.name)) {
        problem(['backends', i, 'name'], `"${backend.name}" names another backend of this model`);
      }
      seen.add(backend.name);
    });
  })
  .transform(({ backends, engine, engineOptions, ...model }) =>
    backends === undefined
      ? { ...model, engine: engine ?? '', engineOptions: engineOptions ?? {} }
      : {
          ...model,
          engine: backends[0]!.engine,
          engineOptions: backends[0]!.engineOptions,
          backends,
        },
  );

export const modelsSchema = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // reported by the schema as "expected array"
  }
}, z.array(modelSchema));
