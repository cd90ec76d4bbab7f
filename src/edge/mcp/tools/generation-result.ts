import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ContentView, TaskView } from '../../../services/generation-views.ts';
import { toolResult } from '../tool-result.ts';
import { orNull } from './portable-schema.ts';
import type { ToolContext } from './tool.ts';

/** A task's state as every tool reports it (cancel_generation returns only this). */
export const taskOutput = {
  task_id: z.string(),
  content_id: z.string(),
  status: z.enum(['queued', 'running', 'finished']),
  finish_code: orNull(z.number(), 'The task has not finished yet.'),
  finish_message: orNull(z.string(), 'The task has not finished yet, or said nothing.'),
  progress: z.number(),
};

/** A generation as list_generations lists it. */
export const generationFields = {
  kind: z.string(),
  model_id: z.string(),
  credits_charged: z.number(),
  credits_refunded: z.number(),
  ...taskOutput,
  media: z.array(
    z.object({
      media_id: z.string(),
      kind: z.string(),
      mime_type: z.string(),
      width: orNull(z.number(), 'Audio has no width.'),
      height: orNull(z.number(), 'Audio has no height.'),
      duration_ms: orNull(z.number(), 'A still image has no duration.'),
      download_url: z.string(),
      expires_at: z.string(),
    }),
  ),
};

/** What get_generation and wait_for_generation return, in full (the SDK checks it). */
export const generationOutput = {
  ...generationFields,
  waiting_reason: orNull(
    z.string(),
    'Nothing holds the task back but its turn in the queue.',
  ).describe(
    'Why a queued task is not running yet: "account_concurrency_limit" while your account runs as many tasks as it may at once.',
  ),
  queue_position: orNull(z.number(), 'The task runs or has finished.').describe(
    "While queued: how many tasks of the model's pool start before it.",
  ),
  estimated_start_at: orNull(
    z.string(),
    'Not known: no runs of this model recorded yet, none of its backends in rotation, or finished.',
  ).describe('When the task should start (or, running, when it started), ISO 8601.'),
  estimated_finish_at: orNull(z.string(), 'Not known, or finished.').describe(
    "When the task should finish, from its backends' recent run times, ISO 8601.",
  ),
  cursor: orNull(z.string(), 'The task event log no longer holds this task.').describe(
    'Where this state stands in the task event log: pass it to wait_for_generation as `after` to hear only what comes next.',
  ),
};

/** The `inline_images` argument of get_generation and wait_for_generation. */
export const inlineImages = z
  .boolean()
  .optional()
  .describe('Also return each finished image inline, as a WebP of at most 512 pixels a side');

/**
 * Where a task stands, in words an agent can repeat: "queued", "running, 42%", "finishing" (the
 * engine is done, the result is being stored), "finished".
 */
export function taskState(task: Pick<TaskView, 'status' | 'progress'>): string {
  if (task.status !== 'running') return task.status;
  if (task.progress >= 1) return 'finishing';
  return `running, ${Math.floor(task.progress * 100)}%`;
}

/** A task's state in snake_case, as every tool reports it. */
export function task(view: TaskView) {
  return {
    task_id: view.taskId,
    content_id: view.contentId,
    status: view.status,
    finish_code: view.finishCode,
    finish_message: view.finishMessage,
    progress: view.progress,
  };
}

/** A generation in snake_case, as get_generation and list_generations report it. */
export function generation(content: ContentView) {
  return {
    kind: content.kind,
    model_id: content.modelId,
    credits_charged: content.creditsCharged,
    credits_refunded: content.creditsRefunded,
    ...task(content.task),
    media: content.media.map((m) => ({
      media_id: m.mediaId,
      kind: m.kind,
      mime_type: m.mimeType,
      width: m.width,
      height: m.height,
      duration_ms: m.durationMs,
      download_url: m.download.url,
      expires_at: m.download.expiresAt.toISOString(),
    })),
  };
}

/**
 * Everything get_generation reports of a generation (`generationOutput`): its state, media with
 * fresh links, and why it waits. Also the text of a generation read as an MCP resource.
 */
export async function generationState(
  content: ContentView,
  { actor, services }: Pick<ToolContext, 'actor' | 'services'>,
) {
  const [waiting_reason, cursor, place] = await Promise.all([
    services.results.waitingReason(actor, content.task),
    services.results.taskCursor(actor, content.task.taskId),
    content.task.status === 'finished' ? null : services.results.place(actor, content.task.taskId),
  ]);
  return {
    ...generation(content),
    waiting_reason,
    queue_position: place?.queuePosition ?? null,
    estimated_start_at: place?.estimatedStartAt?.toISOString() ?? null,
    estimated_finish_at: place?.estimatedFinishAt?.toISOString() ?? null,
    cursor,
  };
}

/**
 * A generation as a tool result: the structured state, and each finished file as a
 * `resource_link` (its expiring download URL) that a client can fetch or show.
 */
export async function generationResult(
  content: ContentView,
  { actor, services }: Pick<ToolContext, 'actor' | 'services'>,
  inlineImages: boolean | undefined,
): Promise<CallToolResult> {
  const result = toolResult(await generationState(content, { actor, services }));
  const links = content.media.map((m, i) => ({
    type: 'resource_link' as const,
    uri: m.download.url,
    name: `${content.contentId}-${i + 1}`,
    mimeType: m.mimeType,
    description: `${m.kind}, expires ${m.download.expiresAt.toISOString()}`,
  }));
  const images = [];
  if (inlineImages === true) {
    for (const m of content.media) {
      const thumbnail = await services.media.thumbnail(actor, m.mediaId);
      if (thumbnail !== null) {
        images.push({
          type: 'image' as const,
          data: thumbnail.toString('base64'),
          mimeType: 'image/webp',
        });
      }
    }
  }
  return { ...result, content: [...result.content, ...links, ...images] };
}
