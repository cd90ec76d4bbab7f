import { z } from 'zod';
import { defined, toolResult } from '../tool-result.ts';
import { annotations, type RegisterTool } from './tool.ts';

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
        avatars: z.array(z.record(z.string(), z.unknown())),
        next_cursor: z.string().nullable(),
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
