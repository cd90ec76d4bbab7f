import { z } from 'zod';
import { registerSubmitTool } from './submit-tool.ts';
import type { RegisterTool } from './tool.ts';

/** The arguments of generate_image and estimate_cost, snake_case on the wire. */
export function imageInputShape() {
  return {
    model_id: z.string().describe('A ready image model from list_models'),
    prompt: z.string().describe('What to draw'),
    negative_prompt: z.string().optional(),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
    aspect_ratio: z.string().optional().describe('e.g. "16:9"; instead of width and height'),
    count: z.number().int().optional(),
    seed: z.number().int().optional(),
    format: z.enum(['png', 'jpeg', 'webp']).optional(),
    element_ids: z.array(z.string()).optional(),
  };
}

/** `generate_image`. */
export const registerGenerateImage: RegisterTool = (server, context) =>
  registerSubmitTool(server, context, {
    name: 'generate_image',
    title: 'Generate images',
    kind: 'image',
    what: 'an image generation',
    shape: imageInputShape(),
  });
