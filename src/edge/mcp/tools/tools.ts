import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerCancelGeneration } from './cancel-generation.tool.ts';
import { registerEstimateCost } from './estimate-cost.tool.ts';
import { registerGenerateAvatarVideo } from './generate-avatar-video.tool.ts';
import { registerGenerateImage } from './generate-image.tool.ts';
import { registerGenerateSpeech } from './generate-speech.tool.ts';
import { registerGenerateVideo } from './generate-video.tool.ts';
import { registerGetAccount } from './get-account.tool.ts';
import { registerGetDownloadUrls } from './get-download-urls.tool.ts';
import { registerGetGeneration } from './get-generation.tool.ts';
import { registerListAvatars } from './list-avatars.tool.ts';
import { registerListElements } from './list-elements.tool.ts';
import { registerListGenerations } from './list-generations.tool.ts';
import { registerListModels } from './list-models.tool.ts';
import { registerListVoiceModels } from './list-voice-models.tool.ts';
import type { RegisterTool, ToolContext } from './tool.ts';
import { registerWaitForGeneration } from './wait-for-generation.tool.ts';

/**
 * Every tool, in the order `tools/list` shows them: what an agent reads before it spends, then
 * the generation life cycle, then the other media. A new tool is a file here and a line below.
 */
const tools: readonly RegisterTool[] = [
  registerGetAccount,
  registerListModels,
  registerListElements,
  registerEstimateCost,
  registerGenerateImage,
  registerGetGeneration,
  registerWaitForGeneration,
  registerGetDownloadUrls,
  registerListGenerations,
  registerCancelGeneration,
  registerListVoiceModels,
  registerListAvatars,
  registerGenerateVideo,
  registerGenerateSpeech,
  registerGenerateAvatarVideo,
];

/** Registers every tool on the server of one MCP request. */
export function registerTools(server: McpServer, context: ToolContext): void {
  for (const register of tools) register(server, context);
}
