import { z } from 'zod';
import { toolResult } from '../tool-result.ts';
import { orNull } from './portable-schema.ts';
import { annotations, defined, nextCursor, type RegisterTool } from './tool.ts';

/** `list_avatars`: the account's avatars for generate_avatar_video. */
export const registerListAvatars: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'list_avatars',
    defined('list_avatars', () => ({
      title: 'Avatars',
      description:
        'This account’s avatars (a portrait and a default voice) for generate_avatar_video.',
      inputSchema: {
        first: z.number().int().optional(),
        after: z.string().optional(),
      },
      outputSchema: {
        avatars: z.array(
          z.object({
            avatar_id: z.string(),
            name: z.string(),
            portrait_media_id: z.string(),
            voice_model_id: orNull(z.string(), 'A script is spoken in the model’s default voice.'),
          }),
        ),
        next_cursor: nextCursor,
      },
      annotations: annotations.read,
    })),
    ({ first, after }) =>
      run(async () => {
        const page = await services.library.listAvatars(actor, first, after ?? null);
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
};
