import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { GenerationKind } from '../../../domain/model.ts';
import { defined, toolResult } from '../tool-result.ts';
import { annotations, fromSnakeCase, type ToolContext } from './tool.ts';

/** What one `generate_*` tool declares; everything else is the same for every kind. */
export interface SubmitTool {
  name: string;
  title: string;
  kind: GenerationKind;
  what: string;
  shape: Record<string, z.ZodType>;
}

/**
 * A charged, idempotent submission tool: the same shape for every kind; the arguments are the
 * GraphQL input in snake_case, validated by the same service.
 */
export function registerSubmitTool(
  server: McpServer,
  { actor, services, run }: ToolContext,
  tool: SubmitTool,
): void {
  server.registerTool(
    tool.name,
    defined(tool.name, () => ({
      title: tool.title,
      description: `Starts ${tool.what} and charges its credits. Always pass an idempotency_key: calling again with the same key and input returns the same generation without charging twice. Then call wait_for_generation with the task_id.`,
      inputSchema: { ...tool.shape, idempotency_key: z.string().min(1).max(200) },
      outputSchema: {
        content_id: z.string(),
        task_id: z.string(),
        deduplicated: z.boolean(),
        credits_charged: z.number(),
      },
      annotations: annotations.submit,
    })),
    (args: Record<string, unknown>) =>
      run(async () => {
        const submitted = await services.generations.submit(actor, tool.kind, fromSnakeCase(args));
        const content = await services.results.getContent(actor, submitted.contentId);
        return toolResult({
          content_id: submitted.contentId,
          task_id: submitted.taskId,
          deduplicated: submitted.deduplicated,
          credits_charged: content.creditsCharged,
        });
      }),
  );
}
