import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Actor } from '../../../domain/actor.ts';
import type { Services } from '../../services.ts';
import { defined, type ToolRunner, toolResult } from '../tool-result.ts';
import { registerSubmitTool } from './generation.tools.ts';

const readOnly = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** Voices, avatars, and the video, speech and talking-avatar generations. */
export function registerMediaTools(
  server: McpServer,
  actor: Actor,
  services: Services,
  run: ToolRunner,
): void {
  server.registerTool(
    'list_voice_models',
    defined('list_voice_models', () => ({
      title: 'Voices',
      description:
        'Voices for generate_speech and generate_avatar_video: voice_model_id, name, language. Filter by a language tag such as "en" or "pt-br".',
      inputSchema: {
        language: z.string().optional(),
        first: z.number().int().min(1).max(100).optional(),
        after: z.string().optional(),
      },
      outputSchema: {
        voices: z.array(z.record(z.string(), z.unknown())),
        next_cursor: z.string().nullable(),
      },
      annotations: readOnly,
    })),
    ({ language, first, after }) =>
      run(async () => {
        const page = await services.voices.list(actor, language, first ?? 100, after ?? null);
        return toolResult({
          voices: page.nodes.map((v) => ({
            voice_model_id: v.voiceModelId,
            name: v.name,
            language: v.language,
            gender: v.gender,
            variant: v.variant,
            preview_media_id: v.previewMediaId,
          })),
          next_cursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
        });
      }),
  );

  server.registerTool(
    'list_avatars',
    defined('list_avatars', () => ({
      title: 'Avatars',
      description:
        'This account’s avatars (a portrait and a default voice) for generate_avatar_video.',
      inputSchema: {
        first: z.number().int().min(1).max(100).optional(),
        after: z.string().optional(),
      },
      outputSchema: {
        avatars: z.array(z.record(z.string(), z.unknown())),
        next_cursor: z.string().nullable(),
      },
      annotations: readOnly,
    })),
    ({ first, after }) =>
      run(async () => {
        const page = await services.library.listAvatars(actor, first ?? 50, after ?? null);
        return toolResult({
          avatars: page.nodes.map((a) => ({
            avatar_id: a.avatarId,
            name: a.name,
            portrait_media_id: a.portraitMediaId,
            voice_model_id: a.voiceModelId,
          })),
          next_cursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
        });
      }),
  );

  registerSubmitTool(server, actor, services, run, {
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

  registerSubmitTool(server, actor, services, run, {
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

  registerSubmitTool(server, actor, services, run, {
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
}
