import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Actor } from '../../../domain/actor.ts';
import type { Services } from '../../services.ts';
import { defined, type ToolRunner, toolResult } from '../tool-result.ts';

const readOnly = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** Account and catalogue tools: what an agent reads before it spends anything. */
export function registerAccountTools(
  server: McpServer,
  actor: Actor,
  services: Services,
  run: ToolRunner,
): void {
  server.registerTool(
    'get_account',
    defined('get_account', () => ({
      title: 'Account and credits',
      description: 'The signed-in Atelier account: its alias and credit balances by category.',
      outputSchema: {
        alias: z.string(),
        credit_balances: z.array(z.object({ category: z.string(), amount: z.number() })),
      },
      annotations: readOnly,
    })),
    () =>
      run(async () => {
        const profile = await services.accounts.getProfile(actor);
        return toolResult({ alias: profile.alias, credit_balances: profile.creditBalances });
      }),
  );

  server.registerTool(
    'list_models',
    defined('list_models', () => ({
      title: 'Generation models',
      description:
        'Models you can generate with: model_id, kind, status (only "ready" models take work), whether this account may use it, its capabilities (allowed sizes, aspect ratios, counts, formats) and price.',
      inputSchema: { kind: z.enum(['image', 'video', 'speech', 'avatar']).optional() },
      outputSchema: { models: z.array(z.record(z.string(), z.unknown())) },
      annotations: readOnly,
    })),
    ({ kind }) =>
      run(async () => {
        const page = services.catalogue.listModels(actor, { kind }, 100);
        return toolResult({
          models: page.nodes.map(({ model, accessible }) => ({
            model_id: model.modelId,
            name: model.name,
            kind: model.kind,
            status: model.status,
            accessible,
            description: model.description,
            capabilities: model.capabilities,
            pricing: model.pricing,
          })),
        });
      }),
  );

  server.registerTool(
    'list_elements',
    defined('list_elements', () => ({
      title: 'Elements',
      description:
        'Reusable characters, objects, styles and scenes to pass as element_ids to generate_image or generate_video: the public library and your own.',
      inputSchema: { kind: z.enum(['character', 'object', 'style', 'scene']).optional() },
      outputSchema: { elements: z.array(z.record(z.string(), z.unknown())) },
      annotations: readOnly,
    })),
    ({ kind }) =>
      run(async () => {
        const page = await services.library.listElements(actor, { kind }, 100);
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
      annotations: readOnly,
    })),
    (args) =>
      run(async () => {
        const estimate = await services.generations.estimate(actor, 'image', fromSnakeCase(args));
        return toolResult({ ...estimate });
      }),
  );
}

/** The arguments of generate_image and estimate_cost, snake_case on the wire. */
export function imageInputShape() {
  return {
    model_id: z.string().describe('A ready image model from list_models'),
    prompt: z.string().describe('What to draw'),
    negative_prompt: z.string().optional(),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
    aspect_ratio: z.string().optional().describe('e.g. "16:9"; instead of width and height'),
    count: z.number().int().optional(),
    seed: z.number().int().optional(),
    format: z.enum(['png', 'jpeg', 'webp']).optional(),
    element_ids: z.array(z.string()).optional(),
  };
}

/** snake_case tool arguments → the camelCase input the services share with GraphQL. */
export function fromSnakeCase(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), value]),
  );
}
