import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { objectFromShape } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpPrincipal } from '../../../auth/oauth/access-tokens.ts';
import type { Actor } from '../../../domain/actor.ts';
import { AppError, ErrorCode } from '../../../shared/errors.ts';
import type { Services } from '../../services.ts';
import type { ToolRunner } from '../tool-result.ts';
import { orNull } from './portable-schema.ts';

/** What every tool of one MCP request is registered with: who calls, what it may use, how. */
export interface ToolContext {
  readonly actor: Actor;
  /**
   * The account as this request's authentication read it, with the token, in the same query:
   * its alias and balances at that moment (read anew for every request, never kept).
   */
  readonly account: McpPrincipal['account'];
  readonly services: Services;
  readonly run: ToolRunner;
}

/** What a tool is registered on: the server of one request, or only the part it calls. */
export type ToolServer = Pick<McpServer, 'registerTool'>;

/** Registers one tool (or a small family) on the server of one request. */
export type RegisterTool = (server: ToolServer, context: ToolContext) => void;

/**
 * The annotations a tool can have here, declared once. Nothing reaches outside Atelier
 * (`openWorldHint: false`): models run on its own engines.
 */
export const annotations = {
  /** Reads only; the same call answers the same (listings, a generation's state). */
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  /** Reads only, but each call mints new expiring URLs. */
  readFresh: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  /**
   * Charges credits. Not idempotent as such: only a call with the same idempotency_key (optional)
   * and input returns the same generation; without one, every call charges.
   */
  submit: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  /** Ends something for good; calling again changes nothing more. */
  destroy: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
} as const satisfies Record<string, ToolAnnotations>;

/** The one credit category a price draws from (list_models, estimate_cost). */
export const creditCategory = orNull(
  z.string(),
  'Spends the account’s categories in their configured order.',
);

/** Where a listing's next page starts: pass it as `after`. */
export const nextCursor = orNull(z.string(), 'This is the last page.');

const definitions = new Map<string, unknown>();

/**
 * The arguments of each tool whose schema lists them all (every tool but the generate_* ones
 * and estimate_cost, whose extra arguments the service names with the kind's fields). Zod
 * drops a key a schema does not list: `list_voice_models {"langauge": "en"}` answered the
 * whole list. Filled as tools are defined.
 */
const toolArguments = new Map<string, readonly string[]>();

/**
 * 120001 naming the first argument `tool` does not take, with the arguments it takes as
 * `allowed`; null when every argument is its own (or the tool names extra ones itself).
 */
export function unknownArgument(tool: string, args: unknown): AppError | null {
  const known = toolArguments.get(tool);
  if (known === undefined || typeof args !== 'object' || args === null) return null;
  const extra = Object.keys(args).find((key) => !known.includes(key));
  if (extra === undefined) return null;
  const problem = { field: extra, message: `is not an argument of ${tool}` };
  return new AppError(ErrorCode.InvalidInput, `${problem.field}: ${problem.message}`, {
    field: extra,
    allowed: known,
    problems: [problem],
  });
}

/**
 * A tool's definition (description, zod schemas, annotations), built once per process. The
 * stateless endpoint registers tools on a new server for each request; rebuilding the schemas
 * each time was most of that cost. A schema given as a shape of fields is made an object here,
 * as the SDK would on every registration: one schema object then serves every request, and
 * zod prepares its parsing once, not on each request's first call (about 8 % of a
 * `tools/call` on PostgreSQL).
 */
export function defined<T extends { inputSchema?: unknown; outputSchema?: unknown }>(
  name: string,
  build: () => T,
): T {
  let definition = definitions.get(name) as T | undefined;
  if (definition === undefined) {
    const built = build();
    // A tool without an input schema takes no argument at all.
    if (built.inputSchema === undefined) toolArguments.set(name, []);
    else if (isShape(built.inputSchema)) toolArguments.set(name, Object.keys(built.inputSchema));
    definition = {
      ...built,
      ...(isShape(built.inputSchema) && { inputSchema: objectFromShape(built.inputSchema) }),
      ...(isShape(built.outputSchema) && { outputSchema: objectFromShape(built.outputSchema) }),
    };
    definitions.set(name, definition);
  }
  return definition;
}

/** A plain object of fields (`{ task_id: z.string() }`), not a zod schema itself. */
function isShape(schema: unknown): schema is Record<string, z.ZodType> {
  return typeof schema === 'object' && schema !== null && !(schema instanceof z.ZodType);
}
