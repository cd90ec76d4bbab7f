import { z } from 'zod';
import { toolResult } from '../tool-result.ts';
import { generation, generationFields } from './generation-result.ts';
import { annotations, defined, nextCursor, type RegisterTool } from './tool.ts';

/** `list_generations`: the history, where an agent reconciles before resubmitting. */
export const registerListGenerations: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'list_generations',
    defined('list_generations', () => ({
      title: 'Generation history',
      description:
        'This account’s generations, newest first. Look here (by idempotency_key) before resubmitting after a timeout or lost connection.',
      inputSchema: {
        idempotency_key: z.string().optional(),
        first: z.number().int().optional(),
        after: z.string().optional(),
      },
      outputSchema: {
        generations: z.array(z.object(generationFields)),
        next_cursor: nextCursor,
      },
      annotations: annotations.read,
    })),
    ({ idempotency_key, first, after }) =>
      run(async () => {
        const page = await services.results.listContents(
          actor,
          { idempotencyKey: idempotency_key },
          first,
          after ?? null,
        );
        return toolResult({
          generations: page.nodes.map(generation),
          next_cursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
        });
      }),
  );
};
