/**
 * What the server asks the sharp worker process (sharp.worker.ts) to do: one pipeline of sharp,
 * from its input through its steps to its end, which is the answer. Everything in a job and an
 * answer crosses the process boundary in V8's serialisation: buffers arrive as buffers.
 */

/** The methods of sharp's `Sharp` a job may chain; each returns the pipeline. */
export const pipelineSteps = [
  'resize',
  'extract',
  'rotate',
  'flatten',
  'blur',
  'modulate',
  'composite',
  'removeAlpha',
  'ensureAlpha',
  'toColourspace',
  'raw',
  'png',
  'jpeg',
  'webp',
  'toFormat',
] as const;
export type PipelineStep = (typeof pipelineSteps)[number];

/** The methods that end a pipeline, with what they resolve to as the answer. */
export const pipelineEnds = ['toBuffer', 'metadata'] as const;
export type PipelineEnd = (typeof pipelineEnds)[number];

export interface ImageJob {
  /** The image's bytes (any format sharp reads, or raw pixels described in `options`). */
  readonly input: Uint8Array;
  /** sharp's constructor options (`failOn`, `limitInputPixels`, `raw`). */
  readonly options: object | undefined;
  readonly steps: readonly (readonly [PipelineStep, readonly unknown[]])[];
  readonly end: PipelineEnd;
  readonly endArgs: readonly unknown[];
}

export type ImageAnswer =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  /** sharp's error, by its message (an image it cannot read, an option it refuses). */
  | { readonly id: number; readonly ok: false; readonly message: string };
