import { z } from 'zod';
import { registerSubmitTool } from './submit-tool.ts';
import type { RegisterTool } from './tool.ts';

/** `generate_speech`: text spoken by a voice of list_voice_models. */
export const registerGenerateSpeech: RegisterTool = (server, context) =>
  registerSubmitTool(server, context, {
    name: 'generate_speech',
    title: 'Generate speech',
    kind: 'speech',
    what: 'a speech generation (text spoken by a voice from list_voice_models)',
    shape: {
      model_id: z.string().describe('A ready speech model from list_models'),
      voice_model_id: z.string(),
      text: z.string(),
      speed: z.number().optional().describe('1 is normal'),
      pitch: z.number().optional().describe('1 is normal'),
      format: z.enum(['mp3', 'wav', 'ogg']).optional(),
    },
  });
