import { z } from 'zod';
import { registerSubmitTool } from './submit-tool.ts';
import type { RegisterTool } from './tool.ts';

/** `generate_avatar_video`: an avatar of list_avatars speaking a script or an uploaded audio. */
export const registerGenerateAvatarVideo: RegisterTool = (server, context) =>
  registerSubmitTool(server, context, {
    name: 'generate_avatar_video',
    title: 'Generate a talking-avatar video',
    kind: 'avatar',
    what: 'a talking-avatar video (MP4 with sound) of an avatar from list_avatars, speaking a script or an uploaded audio',
    shape: {
      model_id: z.string().describe('A ready avatar model from list_models'),
      avatar_id: z.string(),
      script: z.string().optional(),
      voice_model_id: z.string().optional().describe('Instead of the avatar’s voice'),
      audio_media_id: z
        .string()
        .optional()
        .describe('An audio of this account, instead of a script'),
      resolution: z.string().optional(),
    },
  });
