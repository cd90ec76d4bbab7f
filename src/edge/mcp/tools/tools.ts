import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { kindModules } from '../../../domain/kinds/kinds.ts';
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
export function registerTools(server: McpServer, context: ToolContext, only?: string): void {
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
