import { z } from 'zod';
import { maxPageSize } from '../../../shared/pagination.ts';
import { toolResult } from '../tool-result.ts';
import { orNull } from './portable-schema.ts';
import { annotations, defined, type RegisterTool } from './tool.ts';

/** `list_elements`: the public library and the account's own, for `element_ids`. */
export const registerListElements: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'list_elements',
    defined('list_elements', () => ({
      title: 'Elements',
      description:
        'Reusable characters, objects, styles and scenes to pass as element_ids to generate_image or generate_video: the public library and your own.',
      inputSchema: { kind: z.enum(['character', 'object', 'style', 'scene']).optional() },
      outputSchema: {
        elements: z.array(
          z.object({
            element_id: z.string(),
            kind: z.string(),
            name: z.string(),
            description: orNull(z.string(), 'None given.'),
            public: z.boolean().describe('From the shared library; false for your own.'),
          }),
        ),
      },
      annotations: annotations.read,
    })),
    ({ kind }) =>
      run(async () => {
        const page = await services.library.listElements(actor, { kind }, maxPageSize);
        return toolResult({
          elements: page.nodes.map((e) => ({
            element_id: e.elementId,
            kind: e.kind,
            name: e.name,
            description: e.description,
            public: e.accountId === null,
          })),
        });
      }),
  );
};
