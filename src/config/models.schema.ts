import { z } from 'zod';
import type { ModelDefinition } from '../domain/model.ts';

const int = (min: number, max: number) => z.number().int().min(min).max(max);

const sizeSchema = z.object({
  width: int(1, 16_384),
  height: int(1, 16_384),
  aspectRatio: z.string().regex(/^\d+:\d+$/, 'like "16:9"'),
  maxCount: int(1, 100),
});

/** A model in `MODELS`: the shape of {@link ModelDefinition}, with defaults for the optional. */
const modelSchema = z.object({
  modelId: z.string().regex(/^mdl_[A-Za-z0-9_-]{1,60}$/, 'must look like mdl_my-model'),
  name: z.string().min(1),
  kind: z.literal('image'),
  status: z.enum(['ready', 'maintenance', 'deprecated']).default('ready'),
  description: z.string().nullable().default(null),
  engine: z.string().min(1),
  engineOptions: z.record(z.string(), z.unknown()).default({}),
  access: z
    .discriminatedUnion('kind', [
      z.object({ kind: z.literal('public') }),
      z.object({ kind: z.literal('roles'), roles: z.array(z.enum(['user', 'admin'])).min(1) }),
      z.object({ kind: z.literal('accounts'), accountIds: z.array(z.string()).min(1) }),
    ])
    .default({ kind: 'public' }),
  capabilities: z.object({
    sizes: z.array(sizeSchema).min(1),
    formats: z.array(z.enum(['png', 'jpeg', 'webp'])).min(1),
    maxElements: int(0, 16).default(4),
    maxPromptLength: int(1, 20_000).default(2000),
  }),
  pricing: z.object({
    unit: z.enum(['image', 'second', 'character', 'request']),
    credits: int(0, 1_000_000),
    category: z.string().nullable().default(null),
  }),
});

export const modelsSchema = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // reported by the schema as "expected array"
  }
}, z.array(modelSchema));
