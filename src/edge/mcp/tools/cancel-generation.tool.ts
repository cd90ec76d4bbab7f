import { z } from 'zod';
import { toolResult } from '../tool-result.ts';
import { task, taskOutput } from './generation-result.ts';
import { annotations, defined, type RegisterTool } from './tool.ts';

/** `cancel_generation`: finishes a task with code 2 and refunds it. */
export const registerCancelGeneration: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'cancel_generation',
    defined('cancel_generation', () => ({
      title: 'Cancel a generation',
      description:
        'Cancels a queued or running task; it finishes with finish_code 2 and its credits are refunded.',
      inputSchema: { task_id: z.string() },
      outputSchema: taskOutput,
      annotations: annotations.destroy,
    })),
    ({ task_id }) =>
      run(async () => toolResult(task(await services.generations.cancelTask(actor, task_id)))),
  );
};
