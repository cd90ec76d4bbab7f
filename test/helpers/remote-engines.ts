import assert from 'node:assert/strict';
import { errorCodes, graphql } from './graphql.ts';

// Models on the openai-* engines, as an operator writes them in MODELS, and the GraphQL calls
// the remote-engine tests make on the Atelier that runs them.

/** An image model on `openai-images` calling `baseUrl` (its `/v1`) for `upstream`. */
export function remoteImageModel(
  modelId: string,
  baseUrl: string,
  upstream: string,
  options: Record<string, unknown> = {},
  size = 512,
) {
  return {
    modelId,
    name: modelId,
    kind: 'image',
    engine: 'openai-images',
    engineOptions: { baseUrl, model: upstream, apiKeyEnv: 'REMOTE_KEY', ...options },
    capabilities: {
      sizes: [{ width: size, height: size, aspectRatio: '1:1', maxCount: 2 }],
      formats: ['png', 'jpeg'],
      maxElements: 0,
    },
    pricing: { unit: 'image', credits: 5, category: null },
  };
}

/** A speech model on `openai-speech` with one configured voice, `voc_remote-en` → `voice`. */
export function remoteSpeechModel(
  modelId: string,
  baseUrl: string,
  upstream: string,
  voice: string,
) {
  return {
    modelId,
    name: modelId,
    kind: 'speech',
    engine: 'openai-speech',
    engineOptions: {
      baseUrl,
      model: upstream,
      apiKeyEnv: 'REMOTE_KEY',
      voices: [{ voiceModelId: 'voc_remote-en', voice, name: 'Remote English', language: 'en' }],
    },
    capabilities: { formats: ['mp3', 'wav', 'ogg'], pitch: { min: 1, max: 1 } },
    pricing: { unit: 'character', credits: 1, per: 10, category: null },
  };
}

export interface RemoteContent {
  creditsCharged: number;
  creditsRefunded: number;
  task: { status: string; finishCode: number | null; finishMessage: string | null };
  media: Array<{ mediaId: string; mimeType: string; width: number | null; height: number | null }>;
}

/** A content with its task and media, as its owner reads it. */
export async function content(
  url: string,
  apiKey: string,
  contentId: string,
): Promise<RemoteContent> {
  const res = await graphql<{ getContent: RemoteContent }>(url, {
    query: `query C($id: ID!) { getContent(contentId: $id) {
      creditsCharged creditsRefunded task { status finishCode finishMessage }
      media { mediaId mimeType width height } } }`,
    variables: { id: contentId },
    apiKey,
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.getContent;
}

/** Submits a speech generation; the response as it came (errors included). */
export function generateSpeech(url: string, apiKey: string, input: Record<string, unknown>) {
  return graphql<{ generateSpeech: { contentId: string; taskId: string } | null }>(url, {
    query:
      'mutation S($input: GenerateSpeechInput!) { generateSpeech(input: $input) { contentId taskId } }',
    variables: { input },
    apiKey,
  });
}

export function cancelTask(url: string, apiKey: string, taskId: string) {
  return graphql<{ cancelTask: { status: string; finishCode: number } }>(url, {
    query: 'mutation X($id: ID!) { cancelTask(taskId: $id) { status finishCode } }',
    variables: { id: taskId },
    apiKey,
  });
}
