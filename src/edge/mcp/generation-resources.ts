import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListResourcesRequestSchema,
  type ListResourcesResult,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  ErrorCode as RpcErrorCode,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { FinishCode } from '../../domain/finish-code.ts';
import type { OutageLog } from '../../observability/outage-log.ts';
import type { ContentView, MediaView } from '../../services/generation-views.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { snakeCaseError } from './error-spelling.ts';
import { asAppError } from './tool-result.ts';
import { generationState, taskState } from './tools/generation-result.ts';
import type { ToolContext } from './tools/tool.ts';

/**
 * A generation's URI. Not an https URL: reading one needs the caller's token, which only this
 * MCP connection carries (MCP resources: https is for what a client can fetch on its own). The
 * content ID is unguessable and unique across deployments, so the URI needs no host.
 */
const prefix = 'atelier://generations/';
const uriTemplate = `${prefix}{content_id}`;
/** What a generation URI may hold after the prefix: one content ID, URL-safe as all IDs are. */
const contentIdPattern = /^[A-Za-z0-9_-]{1,100}$/;

/** Generations per `resources/list` page, newest first; `nextCursor` leads to older ones. */
const pageSize = 20;
/** A finished image up to this size comes inline with a read (as base64, a third larger). */
const inlineImageBytes = 1024 * 1024; // 1 MiB

/** Who reads, what with, and where an unexpected failure is logged. */
export interface ResourceContext extends Pick<ToolContext, 'actor' | 'services'> {
  readonly log: FastifyBaseLogger;
  readonly outages: OutageLog;
  readonly requestId: string;
}

/**
 * The account's generations as MCP resources, so an agent can look back without a tool call:
 * `resources/list` pages them newest first, the template reads one by content ID, `resources/read`
 * answers get_generation's JSON (fresh download links included) and small finished images inline.
 *
 * Registered on the protocol server itself rather than through McpServer's templates, which
 * neither page a list nor let the capability say the truth: they advertise `listChanged`, and
 * this stateless endpoint never sends a notification, so the capability is a bare `resources`.
 */
export function registerGenerationResources(server: Server, context: ResourceContext): void {
  const { actor, services } = context;
  server.registerCapabilities({ resources: {} });

  server.setRequestHandler(ListResourcesRequestSchema, (request) =>
    answer(context, 'cursor', async (): Promise<ListResourcesResult> => {
      const page = await services.results.listContents(
        actor,
        {},
        pageSize,
        request.params?.cursor ?? null,
      );
      const resources = page.nodes.map(listed);
      const { hasNextPage, endCursor } = page.pageInfo;
      return hasNextPage && endCursor !== null
        ? { resources, nextCursor: endCursor }
        : { resources };
    }),
  );

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate,
        name: 'generation',
        title: 'A generation of this account',
        description:
          'A generation by its content_id (as the generate_* tools return it): get_generation’s JSON with fresh download links, and finished images of at most 1 MiB inline.',
        mimeType: 'application/json',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    answer(context, 'uri', async (): Promise<ReadResourceResult> => {
      const { uri } = request.params;
      const contentId = uri.startsWith(prefix) ? uri.slice(prefix.length) : '';
      if (!contentIdPattern.test(contentId)) {
        throw new AppError(
          ErrorCode.InvalidInput,
          `Not a resource of this server: generations are read as ${uriTemplate}.`,
        );
      }
      const content = await services.results.getContent(actor, contentId);
      const state = await generationState(content, context);
      const files = [];
      for (const media of content.media.filter(inline)) {
        const { bytes, mimeType } = await services.media.read(actor, media.mediaId);
        // The file's own address names it; the JSON beside it carries the same link.
        files.push({ uri: media.download.url, mimeType, blob: bytes.toString('base64') });
      }
      return {
        contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(state) }, ...files],
      };
    }),
  );
}

/** A generation as `resources/list` shows it: enough to choose one without reading it. */
function listed(content: ContentView): Resource {
  const { task } = content;
  const failed = task.status === 'finished' && task.finishCode !== FinishCode.Ok;
  const state = failed ? `finished with code ${task.finishCode}, refunded` : taskState(task);
  const files = content.media.map((m) => m.mimeType);
  return {
    uri: `${prefix}${content.contentId}`,
    name: content.contentId,
    title: `${content.kind} generation, ${state}`,
    description: `${content.modelId}, submitted ${content.createdAt.toISOString()}; ${
      files.length === 0 ? 'no files' : `files: ${files.join(', ')}`
    }.`,
    mimeType: 'application/json',
    annotations: { lastModified: (task.finishedAt ?? content.createdAt).toISOString() },
  };
}

/** Whether a read carries the file itself: a finished image small enough to inline. */
function inline(media: MediaView): boolean {
  return media.kind === 'image' && media.bytes <= inlineImageBytes;
}

/**
 * Runs one resource request. Resources have no tool result to carry a domain error, so it is a
 * JSON-RPC error: Invalid params for what the request named (an unknown or foreign generation
 * alike, a bad URI or cursor: -32602 as the SDK answers an unknown resource and SEP-2164 settles,
 * where the 2025-11-25 text still suggests -32002), Internal error otherwise, the
 * catalogue code in `data` either way, and names spelled as the tools' (error-spelling.ts).
 */
async function answer<T>(
  { log, outages, requestId }: ResourceContext,
  param: 'uri' | 'cursor',
  body: () => Promise<T>,
): Promise<T> {
  try {
    return await body();
  } catch (caught) {
    const error = asAppError(caught, log, requestId, outages);
    const named = error.code === ErrorCode.NotFound || error.code === ErrorCode.InvalidInput;
    throw new McpError(
      named ? RpcErrorCode.InvalidParams : RpcErrorCode.InternalError,
      snakeCaseError(error).message,
      {
        code: error.code,
        retryable: error.retryable,
        ...(named ? { field: param } : {}),
        ...(error.code === ErrorCode.Internal ? { request_id: requestId } : {}),
      },
    );
  }
}
