import { z } from 'zod';
import { registerSubmitTool } from './submit-tool.ts';
import type { RegisterTool } from './tool.ts';

/** `generate_video`: from the prompt, or camera motion over an uploaded image. */
export const registerGenerateVideo: RegisterTool = (server, context) =>
  registerSubmitTool(server, context, {
    name: 'generate_video',
    title: 'Generate a video',
    kind: 'video',
    what: 'a video generation (H.264 MP4): from the prompt, or camera motion over image_media_id',
    shape: {
      model_id: z.string().describe('A ready video model from list_models'),
      prompt: z.string(),
      image_media_id: z.string().optional().describe('An image of this account to animate'),
      duration_seconds: z.number().int().optional(),
      resolution: z.string().optional().describe('e.g. "720p"; see the model’s capabilities'),
      aspect_ratio: z.string().optional(),
      fps: z.number().int().optional(),
      seed: z.number().int().optional(),
      element_ids: z.array(z.string()).optional(),
    },
  });
