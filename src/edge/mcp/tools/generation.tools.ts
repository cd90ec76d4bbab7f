import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Actor } from '../../../domain/actor.ts';
import type { GenerationKind } from '../../../domain/model.ts';
import type { ContentView, TaskView } from '../../../services/generation-views.ts';
import type { Services } from '../../services.ts';
import { defined, type ToolRunner, toolResult } from '../tool-result.ts';
import { fromSnakeCase, imageInputShape } from './account.tools.ts';

const maxWaitSeconds = 60;

/** What get_generation and wait_for_generation return, in full (the SDK checks it). */
const generationOutput = {
  content_id: z.string(),
  kind: z.string(),
  model_id: z.string(),
  credits_charged: z.number(),
  credits_refunded: z.number(),
  task_id: z.string(),
  status: z.enum(['queued', 'running', 'finished']),
  finish_code: z.number().nullable(),
  finish_message: z.string().nullable(),
  progress: z.number(),
  waiting_reason: z
    .string()
    .nullable()
    .describe(
      'Why a queued task is not running yet: "account_concurrency_limit" while your account runs as many tasks as it may at once. Null otherwise.',
    ),
  media: z.array(
    z.object({
      media_id: z.string(),
      kind: z.string(),
      mime_type: z.string(),
      width: z.number().nullable(),
      height: z.number().nullable(),
      duration_ms: z.number().nullable(),
      download_url: z.string(),
      expires_at: z.string(),
    }),
  ),
};

function task(view: TaskView) {
  return {
    task_id: view.taskId,
    content_id: view.contentId,
    status: view.status,
    finish_code: view.finishCode,
    finish_message: view.finishMessage,
    progress: view.progress,
  };
}

function generation(content: ContentView) {
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
 * A generation as a tool result: the structured state, and each finished file as a
 * `resource_link` (its expiring download URL) that a client can fetch or show.
 */
async function generationResult(
  content: ContentView,
  caller: { actor: Actor; services: Services },
  inlineImages: boolean | undefined,
): Promise<CallToolResult> {
  const waiting_reason = await caller.services.results.waitingReason(caller.actor, content.task);
  const result = toolResult({ ...generation(content), waiting_reason });
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
      const thumbnail = await caller.services.media.thumbnail(caller.actor, m.mediaId);
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

const inlineImages = z
  .boolean()
  .optional()
  .describe('Also return each finished image inline, as a WebP of at most 512 pixels a side');

/**
 * A charged, idempotent submission tool: the same shape for every kind; the arguments are the
 * GraphQL input in snake_case, validated by the same service.
 */
export function registerSubmitTool(
  server: McpServer,
  actor: Actor,
  services: Services,
  run: ToolRunner,
  tool: {
    name: string;
    title: string;
    kind: GenerationKind;
    what: string;
    shape: Record<string, z.ZodType>;
  },
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
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
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

/** Generation tools: submit (charged, idempotent), follow, download, list, cancel. */
export function registerGenerationTools(
  server: McpServer,
  actor: Actor,
  services: Services,
  run: ToolRunner,
): void {
  registerSubmitTool(server, actor, services, run, {
    name: 'generate_image',
    title: 'Generate images',
    kind: 'image',
    what: 'an image generation',
    shape: imageInputShape(),
  });

  server.registerTool(
    'get_generation',
    defined('get_generation', () => ({
      title: 'A generation',
      description:
        'Status, finish code (0 = success) and media of a generation, with fresh download links.',
      inputSchema: { content_id: z.string(), inline_images: inlineImages },
      outputSchema: generationOutput,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    })),
    ({ content_id, inline_images }) =>
      run(async () =>
        generationResult(
          await services.results.getContent(actor, content_id),
          { actor, services },
          inline_images,
        ),
      ),
  );

  server.registerTool(
    'wait_for_generation',
    defined('wait_for_generation', () => ({
      title: 'Wait for a generation',
      description: `Waits up to timeout_seconds (at most ${maxWaitSeconds}) for the task to finish, sending progress notifications when you give a progress token; returns the final state, or the current one if it is still running (call again).`,
      inputSchema: {
        task_id: z.string(),
        timeout_seconds: z.number().int().min(1).max(maxWaitSeconds).optional(),
        inline_images: inlineImages,
      },
      outputSchema: generationOutput,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    })),
    ({ task_id, timeout_seconds, inline_images }, extra) =>
      run(async () => {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), (timeout_seconds ?? 30) * 1000);
        const onAbort = () => controller.abort();
        extra.signal.addEventListener('abort', onAbort, { once: true });
        const progressToken = extra._meta?.progressToken;
        let contentId: string | undefined;
        try {
          for await (const view of services.results.watchTask(actor, task_id, controller.signal)) {
            contentId = view.contentId;
            if (progressToken !== undefined) {
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: view.progress, total: 1, message: view.status },
              });
            }
            if (view.status === 'finished') break;
          }
        } finally {
          clearTimeout(timer);
          extra.signal.removeEventListener('abort', onAbort);
        }
        const id = contentId ?? (await services.results.getTask(actor, task_id)).contentId;
        return generationResult(
          await services.results.getContent(actor, id),
          { actor, services },
          inline_images,
        );
      }),
  );

  server.registerTool(
    'get_download_urls',
    defined('get_download_urls', () => ({
      title: 'Download links',
      description:
        'Fresh, expiring download URLs for media of this account (ask again when they expire).',
      inputSchema: { media_ids: z.array(z.string()).min(1).max(100) },
      outputSchema: {
        urls: z.array(z.object({ media_id: z.string(), url: z.string(), expires_at: z.string() })),
      },
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    })),
    ({ media_ids }) =>
      run(async () => {
        const urls = await services.media.downloadUrls(actor, media_ids);
        return toolResult({
          urls: urls.map((u) => ({
            media_id: u.mediaId,
            url: u.url,
            expires_at: u.expiresAt.toISOString(),
          })),
        });
      }),
  );

  server.registerTool(
    'list_generations',
    defined('list_generations', () => ({
      title: 'Generation history',
      description:
        'This account’s generations, newest first. Look here (by idempotency_key) before resubmitting after a timeout or lost connection.',
      inputSchema: {
        idempotency_key: z.string().optional(),
        first: z.number().int().min(1).max(100).optional(),
        after: z.string().optional(),
      },
      outputSchema: {
        generations: z.array(z.record(z.string(), z.unknown())),
        next_cursor: z.string().nullable(),
      },
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    })),
    ({ idempotency_key, first, after }) =>
      run(async () => {
        const page = await services.results.listContents(
          actor,
          { idempotencyKey: idempotency_key },
          first ?? 20,
          after ?? null,
        );
        return toolResult({
          generations: page.nodes.map(generation),
          next_cursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
        });
      }),
  );

  server.registerTool(
    'cancel_generation',
    defined('cancel_generation', () => ({
      title: 'Cancel a generation',
      description:
        'Cancels a queued or running task; it finishes with finish_code 2 and its credits are refunded.',
      inputSchema: { task_id: z.string() },
      outputSchema: { task_id: z.string(), status: z.string(), finish_code: z.number().nullable() },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    })),
    ({ task_id }) =>
      run(async () => toolResult(task(await services.generations.cancelTask(actor, task_id)))),
  );
}
