import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { OutageLog } from '../../observability/outage-log.ts';
import { databaseUnavailable, outageError } from '../../services/database-outage.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { snakeCaseError } from './error-spelling.ts';

/** A successful tool result: the structured value, and the same as text for older clients. */
export function toolResult(structured: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
}

/** Runs a tool body for one MCP request (see `toolRunner`). */
export type ToolRunner = (body: () => Promise<CallToolResult>) => Promise<CallToolResult>;

/**
 * How the tools of one request run: a domain error becomes a tool result with `isError: true`
 * carrying the catalogue code (an agent can act on it), never a protocol error; anything else
 * is logged once under the request id and answered as 190000 with that id, nothing more.
 */
export function toolRunner(
  log: FastifyBaseLogger,
  requestId: string,
  outages: OutageLog,
): ToolRunner {
  return async (body) => {
    try {
      return await body();
    } catch (error) {
      return toolError(asAppError(error, log, requestId, outages));
    }
  };
}

/**
 * What a client of `/mcp` may see of `error`: a domain error as it is; anything else logged once
 * under the request id and replaced by 190000 carrying only that id.
 */
export function asAppError(
  error: unknown,
  log: FastifyBaseLogger,
  requestId: string,
  outages: OutageLog,
): AppError {
  if (error instanceof AppError) return error;
  const outage = outageError(error);
  if (outage !== null) {
    outages.report(databaseUnavailable, error, { requestId });
    return outage;
  }
  log.error({ err: error, requestId }, 'unhandled error in an MCP request');
  return new AppError(
    ErrorCode.Internal,
    `Internal error; the request id ${requestId} identifies it in the server log.`,
    { requestId },
  );
}

/**
 * A tool result with `isError: true` carrying the code and details of `error`, every name in
 * them snake_case like the arguments they are about.
 */
export function toolError(error: AppError): CallToolResult {
  const { message, details: named } = snakeCaseError(error);
  const details = { code: error.code, message, retryable: error.retryable, ...named };
  // No structuredContent: clients validate it against the tool's output schema, which
  // describes success. The details are JSON on the second line of the text.
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `Error ${error.code}: ${message}\n${JSON.stringify({ error: details })}`,
      },
    ],
  };
}
