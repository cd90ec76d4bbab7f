import { z } from 'zod';
import { maxPageSize } from '../../../shared/pagination.ts';
import { toolResult } from '../tool-result.ts';
import { snakeCaseKeys } from '../wire-names.ts';
import { kindArgument } from './kind-schema.ts';
import { openObject, orNull } from './portable-schema.ts';
import { annotations, creditCategory, defined, type RegisterTool } from './tool.ts';

/** `list_models`: the models, their capabilities and prices. */
export const registerListModels: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'list_models',
    defined('list_models', () => ({
      title: 'Generation models',
      description:
        'Models you can generate with: model_id, kind, status (only "ready" models take work), whether this account may use it, its capabilities (allowed sizes, aspect ratios, counts, formats) and price.',
      inputSchema: { kind: kindArgument().optional() },
      outputSchema: {
        models: z.array(
          z.object({
            model_id: z.string(),
            name: z.string(),
            kind: kindArgument(),
            status: z.string(),
            accessible: z.boolean(),
            description: orNull(z.string(), 'None given.'),
            capabilities: openObject({}).describe(
              'What it accepts, by kind: sizes, formats, durations, limits (snake_case keys).',
            ),
            pricing: z.object({
              unit: z.string(),
              credits: z.number(),
              per: z.number(),
              category: creditCategory,
            }),
          }),
        ),
      },
      annotations: annotations.read,
    })),
    ({ kind }) =>
      run(async () => {
        const page = services.catalogue.listModels(actor, { kind }, maxPageSize);
        return toolResult({
          models: page.nodes.map(({ model, accessible }) => ({
            model_id: model.modelId,
            name: model.name,
            kind: model.kind,
            status: model.status,
            accessible,
            description: model.description,
            capabilities: snakeCaseKeys(model.capabilities),
            pricing: model.pricing,
          })),
        });
      }),
  );
};
