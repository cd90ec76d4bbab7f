import { graphql } from './graphql.ts';
import { ffmpeg, gqlOk } from './media.ts';
import type { ReplicateStandin } from './standins/replicate.ts';

/** The variable the test models name in `apiKeyEnv`; its value is the stand-in's token. */
export const tokenEnv = 'REPLICATE_API_TOKEN';

/** A 64-hex version id, as Replicate's community models have. */
export const videoVersion = 'a'.repeat(64);

/** The stand-in's models: official image, talking-head and speech models, a versioned video one. */
export const hostedModels = [
  { name: 'black-forest-labs/flux-schnell', required: ['prompt'] },
  { name: 'acme/clip-maker', version: videoVersion, required: ['prompt'] },
  { name: 'acme/talking-head', required: ['face', 'speech'], fileInputs: ['face', 'speech'] },
  { name: 'acme/read-aloud', required: ['text'] },
];

const pricing = (unit: string, credits: number) => ({ unit, credits, category: null });

/** The connection options every test model shares: the stand-in, its token, a quick poll. */
function connection(standin: ReplicateStandin) {
  return { baseUrl: standin.apiBase, apiKeyEnv: tokenEnv, pollMs: 20 };
}

/**
 * An image model on the stand-in's flux-schnell; `options` add engine options and `fields`
 * other model fields (`maxRunSeconds`).
 */
export function imageModel(
  standin: ReplicateStandin,
  modelId: string,
  options: Record<string, unknown> = {},
  fields: Record<string, unknown> = {},
) {
  return {
    modelId,
    name: modelId,
    kind: 'image',
    engine: 'replicate',
    engineOptions: {
      ...connection(standin),
      model: 'black-forest-labs/flux-schnell',
      input: {
        prompt: '{{prompt}}',
        negative_prompt: '{{negative_prompt}}',
        width: '{{width}}',
        height: '{{height}}',
        num_outputs: '{{count}}',
        seed: '{{seed}}',
        output_format: 'png',
      },
      ...options,
    },
    capabilities: {
      sizes: [{ width: 64, height: 48, aspectRatio: '4:3', maxCount: 4 }],
      formats: ['png'],
    },
    pricing: pricing('image', 3),
    ...fields,
  };
}

/** `MODELS` for the `replicate` engine against the stand-in: image, video, avatar, and `more`. */
export function replicateModels(standin: ReplicateStandin, more: readonly object[] = []): string {
  const engine = connection(standin);
  return JSON.stringify([
    imageModel(standin, 'mdl_rep-image'),
    ...more,
    {
      modelId: 'mdl_rep-video',
      name: 'Replicate video',
      kind: 'video',
      engine: 'replicate',
      engineOptions: {
        ...engine,
        version: `acme/clip-maker:${videoVersion}`,
        waitSeconds: 5,
        cancelAfterSeconds: 600,
        input: { prompt: '{{prompt}}', seconds: '{{duration}}', size: '{{width}}x{{height}}' },
      },
      capabilities: {
        modes: ['text'],
        formats: [
          {
            resolution: '240p',
            aspectRatio: '4:3',
            width: 64,
            height: 48,
            fps: [10],
            maxDurationSeconds: 2,
          },
        ],
        defaultDurationSeconds: 1,
      },
      pricing: pricing('second', 5),
    },
    {
      modelId: 'mdl_rep-avatar',
      name: 'Replicate talking head',
      kind: 'avatar',
      engine: 'replicate',
      engineOptions: {
        ...engine,
        model: 'acme/talking-head',
        input: { face: '{{portrait}}', speech: '{{audio}}' },
        inlineMaxBytes: 50_000, // the small portrait inline, the speech uploaded
      },
      capabilities: { resolutions: [{ resolution: '240p', width: 64, height: 48 }] },
      pricing: pricing('second', 2),
    },
    {
      modelId: 'mdl_rep-speech',
      name: 'Replicate read-aloud',
      kind: 'speech',
      engine: 'replicate',
      engineOptions: {
        ...engine,
        model: 'acme/read-aloud',
        input: { text: '{{text}}', voice: '{{voice}}', speed: '{{speed}}' },
      },
      capabilities: { formats: ['wav'] },
      pricing: pricing('character', 1),
    },
  ]);
}

/** A short MP4 (H.264, and AAC sound with `sound`), as a video model would answer. */
export function testClip(sound: boolean): Promise<Buffer> {
  const video = ['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10:duration=1'];
  const audio = sound ? ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'aac'] : [];
  const codec = ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-shortest'];
  const mp4 = ['-movflags', 'frag_keyframe+empty_moov', '-f', 'mp4', 'pipe:1'];
  return ffmpeg.run({ args: [...video, ...audio, ...codec, ...mp4] });
}

/** Cancels a task through GraphQL, as its owner would. */
export async function cancelTask(url: string, apiKey: string, taskId: string): Promise<void> {
  await gqlOk(url, apiKey, 'mutation C($id: ID!) { cancelTask(taskId: $id) { taskId } }', {
    id: taskId,
  });
}

/** Submits a generation of any kind by its GraphQL mutation; returns the task id. */
export async function submit(
  url: string,
  apiKey: string,
  mutation: 'generateImage' | 'generateVideo' | 'generateSpeech' | 'generateAvatarVideo',
  input: Record<string, unknown>,
): Promise<{ contentId: string; taskId: string }> {
  const type = {
    generateImage: 'GenerateImageInput',
    generateVideo: 'GenerateVideoInput',
    generateSpeech: 'GenerateSpeechInput',
    generateAvatarVideo: 'GenerateAvatarVideoInput',
  }[mutation];
  const res = await graphql<Record<string, { contentId: string; taskId: string }>>(url, {
    query: `mutation S($input: ${type}!) { ${mutation}(input: $input) { contentId taskId } }`,
    variables: { input },
    apiKey,
  });
  const data = res.body.data?.[mutation];
  if (data === undefined || data === null) throw new Error(JSON.stringify(res.body.errors));
  return data;
}
