import { z } from 'zod';
import { fieldsOfAnyKind } from '../../../domain/kinds/kinds.ts';
import type { GenerationKind } from '../../../domain/model.ts';
import { toolResult } from '../tool-result.ts';
import { fromSnakeCase } from '../wire-names.ts';
import { kindArgument, toolShape } from './kind-schema.ts';
import { openObject } from './portable-schema.ts';
import { annotations, creditCategory, defined, type RegisterTool } from './tool.ts';

/** `estimate_cost`: what a generate_* tool would charge, spending nothing; every kind. */
export const registerEstimateCost: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'estimate_cost',
    defined('estimate_cost', () => ({
      title: 'Estimate a generation',
      description:
        'What a generate_* tool would charge for these arguments (the same ones, with the kind), and whether the account can afford it. Spends nothing.',
      inputSchema: openObject({
        kind: kindArgument()
          .optional()
          .describe('The kind of generation: image (the default), video, speech or avatar.'),
        ...toolShape(fieldsOfAnyKind()),
      }),
      outputSchema: {
        credits: z.number(),
        category: creditCategory,
        affordable: z.boolean(),
      },
      annotations: annotations.read,
    })),
    ({ kind, ...args }: Record<string, unknown>) =>
      run(async () => {
        const estimate = await services.generations.estimate(
          actor,
          (kind as GenerationKind | undefined) ?? 'image',
          fromSnakeCase(args),
        );
        return toolResult({ ...estimate });
      }),
  );
};
