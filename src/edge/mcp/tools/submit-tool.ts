import { z } from 'zod';
import type { AnyKindModule } from '../../../domain/kinds/kinds.ts';
import { inputFieldsOf } from '../../../domain/kinds/kinds.ts';
import { toolResult } from '../tool-result.ts';
import { fromSnakeCase } from '../wire-names.ts';
import { toolShape } from './kind-schema.ts';
import { openObject } from './portable-schema.ts';
import { annotations, defined, type RegisterTool } from './tool.ts';

/**
 * A kind's charged, idempotent submission tool (`generate_image`, …): the kind's input fields
 * in snake_case, validated by the same service as the GraphQL mutation.
 */
export function submitTool(kind: AnyKindModule): RegisterTool {
  const name = kind.names.tool;
  return (server, { actor, services, run }) =>
    server.registerTool(
      name,
      defined(name, () => ({
        title: kind.title,
        description: `Starts ${kind.summary} and charges its credits. Always pass an idempotency_key: calling again with the same key and input returns the same generation without charging twice (without a key, every call charges). Then call wait_for_generation with the task_id.`,
        inputSchema: openObject(toolShape(inputFieldsOf(kind.kind))),
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
          const submitted = await services.generations.submit(
            actor,
            kind.kind,
            fromSnakeCase(args),
          );
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
