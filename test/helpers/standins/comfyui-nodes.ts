/**
 * The node classes the ComfyUI stand-in has "installed": the core text-to-image graph
 * (checkpoint, prompts, latent, sampler, decode, save/preview), image input (LoadImage,
 * VAEEncode), core video (CreateVideo, SaveVideo) and Video Helper Suite's VHS_VideoCombine,
 * with input types and ranges after ComfyUI's `nodes.py` (sampler and scheduler lists shortened;
 * the video nodes' ranges are the stand-in's own guess). Output shapes: protocol doc,
 * "Output node shapes".
 */

export type InputSpec =
  | { kind: 'INT' | 'FLOAT'; min: number; max: number }
  | { kind: 'STRING' | 'BOOLEAN' }
  | { kind: 'choice'; choices: () => readonly string[]; custom?: string }
  | { kind: 'link'; type: string };

export interface NodeClass {
  readonly inputs: Readonly<Record<string, InputSpec>>;
  readonly outputs: readonly string[];
  readonly outputNode: boolean;
}

const int = (min: number, max: number): InputSpec => ({ kind: 'INT', min, max });
const float = (min: number, max: number): InputSpec => ({ kind: 'FLOAT', min, max });
const link = (type: string): InputSpec => ({ kind: 'link', type });
const string: InputSpec = { kind: 'STRING' };
const boolean: InputSpec = { kind: 'BOOLEAN' };
const fixed = (...choices: string[]): InputSpec => ({ kind: 'choice', choices: () => choices });

/** The installed classes; `checkpoints` and `inputFiles` are what the server has on disk. */
export function nodeCatalogue(
  checkpoints: () => readonly string[],
  inputFiles: () => readonly string[],
): Readonly<Record<string, NodeClass>> {
  const node = (inputs: Record<string, InputSpec>, outputs: string[], outputNode = false) => ({
    inputs,
    outputs,
    outputNode,
  });
  return {
    CheckpointLoaderSimple: node({ ckpt_name: { kind: 'choice', choices: checkpoints } }, [
      'MODEL',
      'CLIP',
      'VAE',
    ]),
    CLIPTextEncode: node({ text: string, clip: link('CLIP') }, ['CONDITIONING']),
    EmptyLatentImage: node(
      { width: int(16, 16384), height: int(16, 16384), batch_size: int(1, 4096) },
      ['LATENT'],
    ),
    KSampler: node(
      {
        model: link('MODEL'),
        // ComfyUI's max is 2^64 - 1; JavaScript numbers stop being exact at 2^53.
        seed: int(0, Number.MAX_SAFE_INTEGER),
        steps: int(1, 10000),
        cfg: float(0, 100),
        sampler_name: fixed('euler', 'euler_ancestral', 'dpmpp_2m', 'dpmpp_sde', 'ddim'),
        scheduler: fixed('normal', 'karras', 'exponential', 'simple', 'sgm_uniform'),
        positive: link('CONDITIONING'),
        negative: link('CONDITIONING'),
        latent_image: link('LATENT'),
        denoise: float(0, 1),
      },
      ['LATENT'],
    ),
    VAEDecode: node({ samples: link('LATENT'), vae: link('VAE') }, ['IMAGE']),
    VAEEncode: node({ pixels: link('IMAGE'), vae: link('VAE') }, ['LATENT']),
    // LoadImage validates its file itself (VALIDATE_INPUTS), hence custom_validation_failed.
    LoadImage: node(
      { image: { kind: 'choice', choices: inputFiles, custom: 'Invalid image file' } },
      ['IMAGE', 'MASK'],
    ),
    SaveImage: node({ images: link('IMAGE'), filename_prefix: string }, [], true),
    PreviewImage: node({ images: link('IMAGE') }, [], true),
    CreateVideo: node({ images: link('IMAGE'), fps: float(1, 120) }, ['VIDEO']),
    SaveVideo: node(
      {
        video: link('VIDEO'),
        filename_prefix: string,
        format: fixed('auto', 'mp4'),
        codec: fixed('auto', 'h264'),
      },
      [],
      true,
    ),
    VHS_VideoCombine: node(
      {
        images: link('IMAGE'),
        frame_rate: float(1, 120),
        loop_count: int(0, 100),
        filename_prefix: string,
        format: fixed('image/gif', 'image/webp', 'video/h264-mp4', 'video/webm'),
        pingpong: boolean,
        save_output: boolean,
      },
      ['VHS_FILENAMES'],
      true,
    ),
  };
}
