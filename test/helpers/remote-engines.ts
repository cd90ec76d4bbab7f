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

/**
 * A speech model on `openai-speech` with one configured voice, `voc_remote-en` → `voice` (a
 * name, or `{id}` for a custom voice), taking OpenAI's 4096 characters at most.
 */
export function remoteSpeechModel(
  modelId: string,
  baseUrl: string,
  upstream: string,
  voice: string | { id: string },
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
    capabilities: {
      formats: ['mp3', 'wav', 'ogg'],
      pitch: { min: 1, max: 1 },
      maxTextLength: 4096,
    },
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

/**
 * The two audiences of a model server's failure (issue 30 §3): asserts that the account's
 * finish message is exactly `accountWords`, its credits refunded, with the task as the
 * reference, and returns what the operator's log says of that run ("engine run ended",
 * `detail`): the provider's own words, status and address.
 */
export async function failureAudiences(
  t: {
    logged(
      match: (entry: Readonly<Record<string, unknown>>) => boolean,
    ): Promise<Readonly<Record<string, unknown>>>;
  },
  task: { taskId: string; finishMessage: string | null },
  accountWords: string,
): Promise<string> {
  assert.equal(
    task.finishMessage,
    `${accountWords} Credits were refunded. Reference for the operator: ${task.taskId}.`,
  );
  const ended = await t.logged(
    (entry) => entry.msg === 'engine run ended' && entry.taskId === task.taskId,
  );
  assert.equal(typeof ended.detail, 'string', JSON.stringify(ended));
  return ended.detail as string;
}

/** What the account is told of each class of failure, in these words and no others. */
export const accountWords = {
  refused: 'The model server refused this input under its content policy.',
  rejected: 'The model server refused this input.',
  failed: 'The model server failed.',
  unreachable: 'The model server could not be reached.',
  unusable: 'The model server returned a result that could not be used.',
  interrupted: 'The work was stopped on the model server before it finished.',
} as const;
