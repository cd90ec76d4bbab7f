import { z } from 'zod';
import { maxPageSize } from '../../../shared/pagination.ts';
import { toolResult } from '../tool-result.ts';
import { orNull } from './portable-schema.ts';
import { annotations, defined, nextCursor, type RegisterTool } from './tool.ts';

/** `list_voice_models`: voices for generate_speech and generate_avatar_video. */
export const registerListVoiceModels: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'list_voice_models',
    defined('list_voice_models', () => ({
      title: 'Voices',
      description:
        'Voices for generate_speech and generate_avatar_video: voice_model_id, name, language. Filter by a language tag such as "en" or "pt-br".',
      inputSchema: {
        language: z.string().optional(),
        first: z.number().int().optional(),
        after: z.string().optional(),
      },
      outputSchema: {
        voices: z.array(
          z.object({
            voice_model_id: z.string(),
            name: z.string(),
            language: z.string(),
            gender: orNull(z.string(), 'Not stated.'),
            variant: orNull(z.string(), 'The language’s own voice.'),
            preview_media_id: orNull(z.string(), 'No free sample (a model server’s voice).'),
          }),
        ),
        next_cursor: nextCursor,
      },
      annotations: annotations.read,
    })),
    ({ language, first, after }) =>
      run(async () => {
        const page = await services.voices.list(
          actor,
          language,
          first ?? maxPageSize,
          after ?? null,
        );
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
};
