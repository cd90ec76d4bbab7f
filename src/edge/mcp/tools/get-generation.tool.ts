import { z } from 'zod';
import { generationOutput, generationResult, inlineImages } from './generation-result.ts';
import { annotations, defined, type RegisterTool } from './tool.ts';

/** `get_generation`: a generation's state and media, with fresh download links. */
export const registerGetGeneration: RegisterTool = (server, context) => {
  const { actor, services, run } = context;
  server.registerTool(
    'get_generation',
    defined('get_generation', () => ({
      title: 'A generation',
      description:
        'Status, finish code (0 = success) and media of a generation, with fresh download links.',
      inputSchema: { content_id: z.string(), inline_images: inlineImages },
      outputSchema: generationOutput,
      annotations: annotations.read,
    })),
    ({ content_id, inline_images }) =>
      run(async () =>
        generationResult(
          await services.results.getContent(actor, content_id),
          context,
          inline_images,
        ),
      ),
  );
};
