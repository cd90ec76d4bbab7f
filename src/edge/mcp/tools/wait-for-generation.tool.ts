import { z } from 'zod';
import { describePlace } from '../../../domain/queue-place.ts';
import type { TaskView } from '../../../services/generation-views.ts';
import {
  generationOutput,
  generationResult,
  inlineImages,
  taskState,
} from './generation-result.ts';
import { annotations, defined, type RegisterTool } from './tool.ts';

/** Bounds one tool call, so a client's request never hangs on a long generation. */
const maxWaitSeconds = 60;

/** `wait_for_generation`: a bounded wait, with progress notifications when asked for. */
export const registerWaitForGeneration: RegisterTool = (server, context) => {
  const { actor, services, run } = context;
  server.registerTool(
    'wait_for_generation',
    defined('wait_for_generation', () => ({
      title: 'Wait for a generation',
      description: `Waits up to timeout_seconds (at most ${maxWaitSeconds}) for the task to finish, sending progress notifications when you give a progress token; returns the final state, or the current one if it is still running (call again).`,
      inputSchema: {
        task_id: z.string(),
        timeout_seconds: z.number().int().min(1).max(maxWaitSeconds).optional(),
        after: z
          .string()
          .optional()
          .describe(
            'The cursor of a state you already have (get_generation, a resource read, an earlier wait): only what came after it is reported, and a finish already behind it returns at once.',
          ),
        inline_images: inlineImages,
      },
      outputSchema: generationOutput,
      annotations: annotations.read,
    })),
    ({ task_id, timeout_seconds, inline_images, after }, extra) =>
      run(async () => {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), (timeout_seconds ?? 30) * 1000);
        const onAbort = () => controller.abort();
        extra.signal.addEventListener('abort', onAbort, { once: true });
        const progressToken = extra._meta?.progressToken;
        let contentId: string | undefined;
        let lastProgress: number | undefined;
        try {
          const updates = await services.results.watchTask(
            actor,
            task_id,
            controller.signal,
            after ?? null,
          );
          for await (const view of updates) {
            contentId = view.contentId;
            const note = progressNote(view, lastProgress);
            if (progressToken !== undefined && note !== null) {
              // A queued task says where it stands: "queued, 3 ahead, about 40 s".
              if (view.status === 'queued') {
                const place = await services.results.place(actor, view.taskId);
                if (place !== null) note.message = describePlace(place);
              }
              lastProgress = note.progress;
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, total: 1, ...note },
              });
            }
            if (view.status === 'finished') break;
          }
        } finally {
          clearTimeout(timer);
          extra.signal.removeEventListener('abort', onAbort);
        }
        const id = contentId ?? (await services.results.getTask(actor, task_id)).contentId;
        const content = await services.results.getContent(actor, id);
        return generationResult(content, context, inline_images);
      }),
  );
};

/**
 * The progress notification a task's new state deserves after one at `lastProgress`, if any.
 * MCP: "the progress value MUST increase with each notification" — the first says where the
 * task stands, then each climb (the runner writes at most four a second), saying it in words
 * (`taskState`).
 */
export function progressNote(
  task: Pick<TaskView, 'status' | 'progress'>,
  lastProgress: number | undefined,
): { progress: number; message: string } | null {
  if (lastProgress !== undefined && task.progress <= lastProgress) return null;
  return { progress: task.progress, message: taskState(task) };
}
