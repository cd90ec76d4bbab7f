import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AccessTokens,
  BearerError,
  type McpPrincipal,
} from '../../auth/oauth/access-tokens.ts';
import type { Actor } from '../../domain/actor.ts';
import { AppError, ErrorCode, invalidInput } from '../../shared/errors.ts';
import { findTextProblem } from '../../shared/text-input.ts';
import { corsHeaders, preflightRoute } from '../http/cors.ts';
import { httpStatusOf } from '../http/error-status.ts';
import { tokenKey } from '../http/rate-limits.ts';
import type { Services } from '../services.ts';
import type { McpCancellations } from './cancellations.ts';
import { toolError } from './tool-result.ts';

/**
 * The MCP SDK and what builds a server with it (about 10 MiB of a server's memory), loaded by
 * the first request to `/mcp`: a deployment that no agent uses never pays for it.
 */
let mcpServer: Promise<typeof import('./mcp-server.ts')> | undefined;
const loadMcp = () => {
  mcpServer ??= import('./mcp-server.ts');
  return mcpServer;
};

/**
 * `/mcp`: Streamable HTTP in stateless mode (any node answers any request), behind MCP access
 * tokens only (spec §4.2, §5.4). Every request is authenticated anew — signature, audience,
 * expiry, scope, the stored token, an active account — and gets a fresh server whose tools act
 * as that account.
 */
export async function mcpRoutes(
  app: FastifyInstance,
  o: {
    services: Services;
    tokens: AccessTokens;
    publicUrl: string;
    /** Foreign origins whose pages may call this endpoint (`MCP_ALLOWED_ORIGINS`). */
    allowedOrigins: readonly string[];
    version: string;
    cancellations: McpCancellations;
  },
) {
  const origins = new Set([new URL(o.publicUrl).origin, ...o.allowedOrigins]);
  const cors = corsHeaders(origins);
  preflightRoute(app, '/mcp', {
    origins,
    methods: ['POST', 'GET', 'DELETE'],
    headers: [
      'authorization',
      'content-type',
      'mcp-protocol-version',
      'mcp-session-id',
      'last-event-id',
    ],
  });
  const resourceMetadata = `${o.publicUrl}/.well-known/oauth-protected-resource/mcp`;

  const challenge = (reply: FastifyReply, status: 401 | 403, error?: BearerError) => {
    const parts = [`resource_metadata="${resourceMetadata}"`, 'scope="mcp:access"'];
    if (error !== undefined)
      parts.push(`error="${error.error}"`, `error_description="${error.message}"`);
    return reply
      .code(status)
      .header('www-authenticate', `Bearer ${parts.join(', ')}`)
      .header('cache-control', 'no-store')
      .send({
        error: error?.error ?? 'unauthorized',
        error_description: error?.message ?? 'An MCP access token is required.',
      });
  };

  /** The caller's actor and account as read with the token, or a reply already sent. */
  const authenticate = async (
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<{ actor: Actor; account: McpPrincipal['account']; jti: string } | null> => {
    const origin = request.headers.origin;
    // DNS rebinding: a page of another origin must not drive this endpoint from a browser,
    // unless the operator listed that origin.
    if (origin !== undefined && !origins.has(origin)) {
      await reply.code(403).send({ error: 'forbidden', error_description: 'Foreign Origin.' });
      return null;
    }
    const version = request.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !(await loadMcp()).supportsVersion(version)) {
      await reply.code(400).send({
        error: 'invalid_request',
        error_description: `Unsupported MCP-Protocol-Version ${version}.`,
      });
      return null;
    }
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    if (match?.[1] === undefined) {
      await challenge(reply, 401);
      return null;
    }
    try {
      const principal = await o.tokens.verify(match[1]);
      return {
        actor: {
          accountId: principal.accountId,
          role: principal.role,
          credential: { kind: 'mcp_token', clientId: principal.clientId },
          address: request.ip,
        },
        account: principal.account,
        jti: principal.jti,
      };
    } catch (error) {
      if (error instanceof AppError && error.retryable) {
        // 100102: the database is away; the token may well be good. The cause is logged,
        // the client is told only to retry.
        app.outages.report('MCP token could not be checked', error.cause, { reqId: request.id });
        await reply
          .code(httpStatusOf[error.code])
          .header('retry-after', '1')
          .header('cache-control', 'no-store')
          .send({
            error: 'temporarily_unavailable',
            error_description: error.message,
            code: error.code,
            retryable: true,
            request_id: request.id,
          });
        return null;
      }
      if (!(error instanceof BearerError)) throw error;
      await challenge(reply, error.status, error);
      return null;
    }
  };

  // Per token (a bogus one is refused by its signature before any database work), else per IP.
  const limit = app.limits.api(
    'mcp',
    (request) => {
      const bearer = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
      return bearer === undefined ? null : tokenKey(bearer);
    },
    'mcp',
  );

  app.post('/mcp', { onRequest: [cors, limit] }, async (request, reply) => {
    const mcp = await loadMcp();
    const signedIn = await authenticate(request, reply);
    if (signedIn === null) return reply;
    const { actor, account, jti } = signedIn;
    // JSON-RPC batches left MCP in 2025-06-18 (none in 2025-11-25), but the SDK's transport still
    // runs up to 100 messages of one array, whatever version was negotiated: one request, one
    // rate-limit hit, a hundred tool calls. Refused whole, before any message is looked at.
    if (Array.isArray(request.body)) {
      return reply
        .code(400)
        .header('cache-control', 'no-store')
        .send({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported.' },
        });
    }
    const badText = refuseText(request.body);
    if (badText !== null) {
      return reply.code(badText.status).header('cache-control', 'no-store').send(badText.body);
    }
    await mcp.answer(request, reply, {
      actor,
      account,
      services: o.services,
      version: o.version,
      jti,
      cancellations: o.cancellations,
    });
    return reply;
  });

  // Stateless: no server-initiated stream to resume, no session to end (transport spec).
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      onRequest: [cors, limit],
      handler: async (request, reply) => {
        if ((await authenticate(request, reply)) === null) return reply;
        return reply.code(405).header('allow', 'POST').send({
          error: 'method_not_allowed',
          error_description: 'This server is stateless: POST only.',
        });
      },
    });
  }
}

/**
 * Text no edge accepts (NUL, unpaired surrogates) never reaches a tool: in a tool's arguments
 * it is that call's result, `isError` with 120001 naming the argument, as any domain error
 * is; anywhere else in the message it is a JSON-RPC Invalid params error. Answered as JSON
 * (which the client accepts alongside an event stream) without the transport.
 */
function refuseText(body: unknown): { status: number; body: unknown } | null {
  if (findTextProblem(body, '') === null) return null;
  const message = body as { id?: unknown; method?: unknown; params?: { arguments?: unknown } };
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  const inArguments = findTextProblem(message.params?.arguments, '');
  if (message.method === 'tools/call' && id !== null && inArguments !== null)
    return {
      status: 200,
      body: { jsonrpc: '2.0', id, result: toolError(invalidInput([inArguments])) },
    };
  const problem = findTextProblem(body, '')!;
  return {
    status: 400,
    body: {
      jsonrpc: '2.0',
      id,
      error: {
        code: -32602,
        message: `Invalid params: ${problem.field} ${problem.message}.`,
        data: { code: ErrorCode.InvalidInput, field: problem.field },
      },
    },
  };
}
