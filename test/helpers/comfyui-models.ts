import { after, before } from 'node:test';
import type { Backend, Database } from '../../src/store/database.ts';
import { startTestApp, type TestApp } from './app.ts';
import { createTestDatabase } from './database.ts';
import { ffmpeg } from './media.ts';
import { ComfyStandin } from './standins/comfyui.ts';
import type { RecordedRequest } from './standins/standin-server.ts';

/** The checkpoint the ComfyUI stand-in has "installed" for these workflows. */
export const checkpoint = 'sd_xl_base_1.0.safetensors';

/** An SDXL text-to-image workflow in API format, with the comfyui engine's markers. */
export function imageWorkflow(): Record<string, unknown> {
  return {
    '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: checkpoint } },
    '5': {
      class_type: 'EmptyLatentImage',
      inputs: { width: '{{width}}', height: '{{height}}', batch_size: '{{count}}' },
    },
    '6': {
      class_type: 'CLIPTextEncode',
      inputs: { text: '{{prompt}}, highly detailed', clip: ['4', 1] },
    },
    '7': { class_type: 'CLIPTextEncode', inputs: { text: '{{negative_prompt}}', clip: ['4', 1] } },
    '3': {
      class_type: 'KSampler',
      inputs: {
        model: ['4', 0],
        seed: '{{seed}}',
        steps: 25,
        cfg: 7,
        sampler_name: 'dpmpp_2m',
        scheduler: 'karras',
        positive: ['6', 0],
        negative: ['7', 0],
        latent_image: ['5', 0],
        denoise: 1,
      },
    },
    '8': { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
    '9': { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'atelier' } },
  };
}

/** A text-to-video workflow on core nodes: one latent per frame, saved by SaveVideo. */
export function videoWorkflow(): Record<string, unknown> {
  const graph = imageWorkflow();
  delete graph['7'];
  delete graph['9'];
  return {
    ...graph,
    '5': {
      class_type: 'EmptyLatentImage',
      inputs: { width: '{{width}}', height: '{{height}}', batch_size: '{{frames}}' },
    },
    '3': {
      class_type: 'KSampler',
      inputs: {
        ...(graph['3'] as { inputs: Record<string, unknown> }).inputs,
        negative: ['6', 0],
      },
    },
    '10': { class_type: 'CreateVideo', inputs: { images: ['8', 0], fps: '{{fps}}' } },
    '11': {
      class_type: 'SaveVideo',
      inputs: { video: ['10', 0], filename_prefix: 'video/atelier', format: 'mp4', codec: 'h264' },
    },
  };
}

/** Text-to-video saved by Video Helper Suite's VHS_VideoCombine (files listed under `gifs`). */
export function vhsVideoWorkflow(): Record<string, unknown> {
  const graph = videoWorkflow();
  delete graph['10'];
  delete graph['11'];
  return {
    ...graph,
    '14': {
      class_type: 'VHS_VideoCombine',
      inputs: {
        images: ['8', 0],
        frame_rate: '{{fps}}',
        loop_count: 0,
        filename_prefix: 'atelier',
        format: 'video/h264-mp4',
        pingpong: false,
        save_output: true,
      },
    },
  };
}

/** Image-to-video on core nodes: the uploaded still, encoded, sampled into frames. */
export function imageToVideoWorkflow(): Record<string, unknown> {
  const graph = videoWorkflow();
  return {
    ...graph,
    '12': { class_type: 'LoadImage', inputs: { image: '{{image}}' } },
    '13': { class_type: 'VAEEncode', inputs: { pixels: ['12', 0], vae: ['4', 2] } },
    '3': {
      class_type: 'KSampler',
      inputs: {
        ...(graph['3'] as { inputs: Record<string, unknown> }).inputs,
        latent_image: ['13', 0],
        denoise: 0.6,
      },
    },
  };
}

/** An image model on the comfyui engine; `options` and `extra` add or override. */
export function comfyImageModel(
  modelId: string,
  baseUrl: string,
  options: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    modelId,
    name: modelId,
    kind: 'image',
    engine: 'comfyui',
    engineOptions: { baseUrl, workflow: imageWorkflow(), ...options },
    capabilities: {
      sizes: [
        { width: 64, height: 48, aspectRatio: '4:3', maxCount: 2 },
        { width: 32, height: 32, aspectRatio: '1:1', maxCount: 2 },
      ],
      formats: ['png'],
    },
    pricing: { unit: 'image', credits: 3, category: null },
    ...extra,
  };
}

/** A video model on the comfyui engine (text-, image-to-video, or VHS-saved): 64x48, 8 fps, 1–2 s. */
export function comfyVideoModel(
  modelId: string,
  baseUrl: string,
  mode: 'text' | 'image' | 'vhs' = 'text',
) {
  const workflow = { text: videoWorkflow, image: imageToVideoWorkflow, vhs: vhsVideoWorkflow }[
    mode
  ]();
  return {
    modelId,
    name: modelId,
    kind: 'video',
    engine: 'comfyui',
    engineOptions: { baseUrl, workflow },
    capabilities: {
      modes: [mode === 'image' ? 'image' : 'text'],
      formats: [
        {
          resolution: '48p',
          aspectRatio: '4:3',
          width: 64,
          height: 48,
          fps: [8],
          minDurationSeconds: 1,
          maxDurationSeconds: 2,
        },
      ],
      defaultDurationSeconds: 2,
    },
    pricing: { unit: 'second', credits: 2, category: null },
  };
}

/** `seconds` of a 64x48 H.264 test pattern as MP4 (made by ffmpeg), as SaveVideo would write. */
export function testVideo(seconds: number): Promise<Buffer> {
  return ffmpeg.run({
    args: [
      ...['-f', 'lavfi', '-i', `testsrc=size=64x48:rate=8:duration=${seconds}`],
      ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p'],
      ...['-movflags', 'frag_keyframe+empty_moov', '-f', 'mp4', 'pipe:1'],
    ],
  });
}

/**
 * Suite scaffolding: the ComfyUI protocol stand-in, then a database of `backend` and the app
 * with `models(standinUrl)` in `MODELS` (and `env`); all closed after the suite.
 */
export function withComfyApp(
  backend: Backend,
  models: (baseUrl: string) => unknown[],
  set: (started: { comfy: ComfyStandin; database: Database; t: TestApp }) => void,
  env: Record<string, string> = {},
): void {
  let started: { comfy: ComfyStandin; database: Database; t: TestApp } | undefined;
  before(async () => {
    const comfy = await ComfyStandin.start({ checkpoints: [checkpoint] });
    const database = await createTestDatabase(backend);
    const vars = { MODELS: JSON.stringify(models(comfy.url)), WORKER_CONCURRENCY: '2', ...env };
    started = { comfy, database, t: await startTestApp(database, { env: vars }) };
    set(started);
  });
  after(async () => {
    await started?.t.close();
    await started?.database.close();
    await started?.comfy.close();
  });
}

/** The ComfyUI prompt id (and client id) of an Atelier task. */
export const promptOf = (taskId: string): string => `atelier-${taskId}`;

/** Matches a POST to `path` on a stand-in. */
export const posted =
  (path: string) =>
  (r: RecordedRequest): boolean =>
    r.method === 'POST' && r.path === path;
