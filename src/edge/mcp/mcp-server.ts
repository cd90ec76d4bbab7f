import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { McpPrincipal } from '../../auth/oauth/access-tokens.ts';
import type { Actor } from '../../domain/actor.ts';
import { kindModules } from '../../domain/kinds/kinds.ts';
import { ErrorCode } from '../../shared/errors.ts';
import type { Services } from '../services.ts';
import type { McpCancellations } from './cancellations.ts';
import { registerGenerationResources } from './generation-resources.ts';
import { toolError, toolRunner } from './tool-result.ts';
import { unknownArgument } from './tools/tool.ts';
import { registerTools } from './tools/tools.ts';

/** The generate_* tools, one per kind: "generate_image, …, or generate_avatar_video". */
const generateTools = kindModules
  .map((kind) => kind.names.tool)
  .join(', ')
  .replace(/, ([^,]+)$/, ' or $1');

const instructions = `Atelier makes images, videos, speech and talking-avatar videos for the signed-in account, paid with its credits.
Flow: get_account → list_models (pick a ready, accessible model of the kind you need) → estimate_cost → ${generateTools} with an idempotency_key → wait_for_generation → use the download links (get_download_urls refreshes them).
Speech needs a voice (list_voice_models); an avatar video needs an avatar (list_avatars) and a script or an uploaded audio; images and videos may use elements (list_elements).
Never resubmit blindly after a timeout or an error: call list_generations with the idempotency_key first, or resend with the same key (it cannot charge twice). A finish_code other than 0 means the credits were refunded.
Past generations are also resources (atelier://generations/{content_id}, newest first in resources/list): reading one gives get_generation's JSON with fresh download links, and a small finished image inline.`;

// Every request's server would otherwise build its own Ajv (with its formats), a tenth of a
// tools/call; this one serves them all (the SDK uses it only for elicitation schemas).
const jsonSchemaValidator = new AjvJsonSchemaValidator();

export function supportsVersion(version: string): boolean {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

/** Who asks, as `/mcp` authenticated them, and what the server answers with. */
export interface McpCaller {
  readonly actor: Actor;
  readonly account: McpPrincipal['account'];
  readonly services: Services;
  readonly version: string;
  /** The id of the token the request came with: whose requests a cancellation may stop. */
  readonly jti: string;
  readonly cancellations: McpCancellations;
}

/**
 * Answers one authenticated message with a server of its own (stateless: any node answers any
 * request), whose tools and resources act as the caller's account.
 */
export async function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  c: McpCaller,
): Promise<void> {
  const server = new McpServer(
    { name: 'atelier', title: 'Atelier', version: c.version },
    { instructions, jsonSchemaValidator },
  );
  const message = request.body as { method?: unknown; params?: { name?: unknown } } | null;
  const called =
    message?.method === 'tools/call' && typeof message.params?.name === 'string'
      ? message.params.name
      : undefined;
  registerTools(
    server,
    {
      actor: c.actor,
      account: c.account,
      services: c.services,
      run: toolRunner(request.log, request.id, request.server.outages),
    },
    called,
  );
  // A typo among a tool's arguments is named (120001), as over GraphQL, not dropped: answered
  // as that call's result before the SDK's validation would strip it.
  const unknown = called === undefined ? null : unknownArgument(called, argumentsOf(message));
  if (unknown !== null) {
    await reply
      .header('cache-control', 'no-store')
      .send({ jsonrpc: '2.0', id: idOf(message), result: toolError(unknown) });
    return;
  }
  // The tool list is one page: no cursor is one of its. The SDK would answer the whole list.
  const cursor = (message as { params?: { cursor?: unknown } } | null)?.params?.cursor;
  if (message?.method === 'tools/list' && cursor !== undefined) {
    await reply
      .code(200)
      .header('cache-control', 'no-store')
      .send({
        jsonrpc: '2.0',
        id: idOf(message),
        error: {
          code: -32602,
          message:
            'Invalid params: cursor is not one this server gave; the tool list has one page.',
          data: { code: ErrorCode.InvalidInput, retryable: false, field: 'cursor' },
        },
      });
    return;
  }
  registerGenerationResources(server.server, {
    actor: c.actor,
    services: c.services,
    log: request.log,
    outages: request.server.outages,
    requestId: request.id,
  });
  // The SDK advertises `tools.listChanged: true` once a tool is registered. This server lives
  // for one request, its tools never change under a client, and it never sends list_changed.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  // The SDK's web-standard transport, given a Request made from Fastify's (body already
  // parsed), answers with a Response that Fastify sends (a stream when it is one): the Node
  // transport's conversion through @hono/node-server was about a fifth of a tools/call's CPU.
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  // A client gone before its answer: closing aborts what still runs for it (a wait). After an
  // answer the stream has ended and nothing holds the server; closing it anyway built an error
  // with its stack trace on every request (5 % of a tools/call).
  const stop = () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  };
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) stop();
  });
  await followCancellations(request, reply, c, message, stop);
  await server.connect(transport);
  const response = await transport.handleRequest(webRequest(request), {
    parsedBody: request.body,
  });
  await reply.send(called === waitTool ? openedAtOnce(response) : response);
}

/** The one tool that may take long to answer (up to a minute) and send nothing meanwhile. */
const waitTool = 'wait_for_generation';
const opening = new TextEncoder().encode(': waiting\n\n');

/**
 * An event stream that starts with an SSE comment, so its headers and a first byte leave at
 * once: Node sends a response's headers with its first body byte, and a wait without a progress
 * token would otherwise send nothing (not even headers) until it answers, up to a minute — past
 * the header time-outs of some proxies. The SDK's keep-alive comments (every 15 s) follow.
 */
function openedAtOnce(response: Response): Response {
  const body = response.body;
  if (body === null || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return response;
  }
  const reader = body.getReader();
  let opened = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!opened) {
        opened = true;
        controller.enqueue(opening);
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(stream, { status: response.status, headers: response.headers });
}

/**
 * MCP's cancellation (`notifications/cancelled`): the client gives up a request it sent, which
 * runs as another POST, perhaps on another node. A notification stops it wherever it runs; a
 * request is stoppable while it runs. Stopping closes its server and transport: what runs for
 * it is aborted (a wait ends) and its stream ends with no answer, as the protocol asks. The
 * task itself is not cancelled; cancel_generation does that.
 */
async function followCancellations(
  request: FastifyRequest,
  reply: FastifyReply,
  c: McpCaller,
  message: unknown,
  stop: () => void,
): Promise<void> {
  const { method, params } = (message ?? {}) as {
    method?: unknown;
    params?: { requestId?: unknown };
  };
  if (method === 'notifications/cancelled') {
    const cancelled = params?.requestId;
    if (typeof cancelled === 'string' || typeof cancelled === 'number') {
      await c.cancellations.cancel(c.jti, cancelled).catch((error: unknown) => {
        request.log.warn({ err: error }, 'an MCP cancellation could not be passed on');
      });
    }
    return;
  }
  const id = idOf(message);
  if (id === null) return;
  const untrack = c.cancellations.track(c.jti, id, stop);
  reply.raw.on('close', untrack);
}

function idOf(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function argumentsOf(message: unknown): unknown {
  return (message as { params?: { arguments?: unknown } } | null)?.params?.arguments;
}

/** What the transport reads of a request: method, URL and headers (the body is given parsed). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (value !== undefined) for (const v of value) headers.append(name, v);
  }
  return new Request(`${request.protocol}://${request.host}${request.url}`, {
    method: request.method,
    headers,
  });
}
