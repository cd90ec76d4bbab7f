import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { kindModules } from '../../../domain/kinds/kinds.ts';
import { inSpan, tracingOn } from '../../../observability/tracing.ts';
import { registerCancelGeneration } from './cancel-generation.tool.ts';
import { registerEstimateCost } from './estimate-cost.tool.ts';
import { registerGetAccount } from './get-account.tool.ts';
import { registerGetDownloadUrls } from './get-download-urls.tool.ts';
import { registerGetGeneration } from './get-generation.tool.ts';
import { registerListAvatars } from './list-avatars.tool.ts';
import { registerListElements } from './list-elements.tool.ts';
import { registerListGenerations } from './list-generations.tool.ts';
import { registerListModels } from './list-models.tool.ts';
import { registerListVoiceModels } from './list-voice-models.tool.ts';
import { submitTool } from './submit-tool.ts';
import type { RegisterTool, ToolContext, ToolServer } from './tool.ts';
import { registerWaitForGeneration } from './wait-for-generation.tool.ts';

/**
 * Every tool, in the order `tools/list` shows them: what an agent reads before it spends, then
 * a generate_* tool per kind, then the generation life cycle, then the voices and avatars. A new
 * tool is a file here and a line below; a new kind brings its generate_* tool by itself.
 */
const tools: readonly RegisterTool[] = [
  registerGetAccount,
  registerListModels,
  registerListElements,
  registerEstimateCost,
  ...kindModules.map(submitTool),
  registerGetGeneration,
  registerWaitForGeneration,
  registerGetDownloadUrls,
  registerListGenerations,
  registerCancelGeneration,
  registerListVoiceModels,
  registerListAvatars,
];

/**
 * Registers the tools on the server of one MCP request: every tool, or with `only`, the tool of
 * that name alone — a `tools/call` uses no other, and registering all of them was a tenth of
 * one. A name that is no tool's gets every tool, so the SDK answers it as it always does.
 */
export function registerTools(target: McpServer, context: ToolContext, only?: string): void {
  const server: ToolServer = tracingOn() ? tracedTools(target) : target;
  if (only !== undefined) {
    let found = false;
    const one: ToolServer = {
      registerTool: ((name, config, callback) => {
        if (name !== only) return undefined;
        found = true;
        return server.registerTool(name, config, callback);
      }) as McpServer['registerTool'],
    };
    for (const register of tools) register(one, context);
    if (found) return;
  }
  for (const register of tools) register(server, context);
}

/**
 * Tools whose every call runs in a span of its own (`tools/call <name>`, child of the `/mcp`
 * request's), attributed with the tool's name and whether it answered an error.
 */
function tracedTools(server: McpServer): ToolServer {
  const registerTool = ((name: string, config: unknown, callback: ToolCallback) =>
    server.registerTool(
      name,
      config as never,
      (async (...args: unknown[]) =>
        inSpan(
          `tools/call ${name}`,
          { attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': name } },
          async (span) => {
            const result = (await (callback as (...a: unknown[]) => unknown)(...args)) as {
              isError?: boolean;
            };
            if (result?.isError === true) span.fail('tool_error');
            return result;
          },
        )) as never,
    )) as McpServer['registerTool'];
  return { registerTool };
}

type ToolCallback = (...args: never[]) => unknown;
