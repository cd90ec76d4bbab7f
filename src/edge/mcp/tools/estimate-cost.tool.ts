import { z } from 'zod';
import { defined, toolResult } from '../tool-result.ts';
import { imageInputShape } from './generate-image.tool.ts';
import { annotations, fromSnakeCase, type RegisterTool } from './tool.ts';

/** `estimate_cost`: what generate_image would charge, spending nothing. */
export const registerEstimateCost: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'estimate_cost',
    defined('estimate_cost', () => ({
      title: 'Estimate a generation',
      description:
        'What generate_image would charge for these settings, and whether the account can afford it. Spends nothing.',
      inputSchema: imageInputShape(),
      outputSchema: {
        credits: z.number(),
        category: z.string().nullable(),
        affordable: z.boolean().nullable(),
      },
      annotations: annotations.read,
    })),
    (args) =>
      run(async () => {
        const estimate = await services.generations.estimate(actor, 'image', fromSnakeCase(args));
        return toolResult({ ...estimate });
      }),
  );
};
