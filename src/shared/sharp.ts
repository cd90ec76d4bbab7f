import type { Sharp, SharpOptions } from 'sharp';
import {
  type ImageAnswer,
  type ImageJob,
  type PipelineEnd,
  type PipelineStep,
  pipelineEnds,
  pipelineSteps,
} from './sharp-protocol.ts';
import { WorkerProcess } from './worker-process.ts';

/** The parameters of a method, each of its overloads (up to two) included. */
type ArgumentsOf<F> = F extends {
  (...args: infer A): unknown;
  (...args: infer B): unknown;
}
  ? A | B
  : never;

/**
 * A sharp pipeline as the server writes one — `sharp(bytes).resize(…).png().toBuffer()` — run
 * in the sharp worker process. Each step returns a new pipeline (sharp's own mutate and return
 * themselves; no caller here relied on that); the end sends the whole pipeline to the worker
 * and resolves with its answer.
 */
export type ImagePipeline = {
  readonly [S in PipelineStep]: (...args: ArgumentsOf<Sharp[S]>) => ImagePipeline;
} & Pick<Sharp, PipelineEnd>;

/**
 * How long the sharp worker may stay idle before it is stopped; the next image then waits for a
 * new one (a Node start and loading sharp, 0.1–0.3 s).
 */
const workerIdleMs = 5_000; // 5 seconds
/** Pipelines in the worker at once: sharp runs each on one of libuv's four threads. */
const workerConcurrency = 4;

const worker = new WorkerProcess<ImageJob, ImageAnswer>(
  new URL('./sharp.worker.ts', import.meta.url),
  { name: 'sharp worker', idleMs: workerIdleMs, concurrency: workerConcurrency },
);

/**
 * sharp (libvips) for the server's images, run in a worker process that exits when idle: sharp
 * loaded in the server kept libvips' code, its threads' malloc arenas and a fragmented heap for
 * good, about 80 MiB after a thousand images (issue 34: memory that stays flat). It is also
 * apart from the server if libvips crashes on a hostile upload. Failures reject with sharp's
 * message.
 */
export function sharp(input: Uint8Array, options?: SharpOptions): ImagePipeline {
  return pipeline({ input, options, steps: [] });
}

function pipeline(job: Omit<ImageJob, 'end' | 'endArgs'>): ImagePipeline {
  const steps = pipelineSteps.map((step) => [
    step,
    (...args: unknown[]) => pipeline({ ...job, steps: [...job.steps, [step, args]] }),
  ]);
  const ends = pipelineEnds.map((end) => [
    end,
    async (...endArgs: unknown[]) => {
      const answer = await worker.run({ ...job, end, endArgs });
      if (!answer.ok) throw new ImageError(answer.message);
      return answer.value;
    },
  ]);
  return Object.fromEntries([...steps, ...ends]) as ImagePipeline;
}

/**
 * sharp's own refusal, by its message: an image it cannot read, an option it refuses. Anything
 * else a pipeline rejects with (the worker crashed, out of memory; it was closed) is about this
 * server, not the image.
 */
export class ImageError extends Error {
  override readonly name = 'ImageError';
}

/**
 * Proves that an image arrived whole and decodes, given its dimensions (its header read):
 * rejects with an {@link ImageError} otherwise. Producing the bottom-right pixel (only that
 * pixel comes back from the worker) decodes every byte of the first frame of a PNG, JPEG, WebP
 * or GIF, interlaced and progressive ones too: libvips cannot make it from the data before it.
 * Not `stats()`: it accepted a truncated interlaced PNG, and lost the error of a truncated PNG
 * or JPEG when other images were decoded at the same time (sharp 0.35.5, libvips 8.18.7).
 *
 * What a decode cannot see is checked on the bytes: a PNG cut just before its IEND chunk, and a
 * GIF cut after its first frame, decode without an error, so they must end as their format says.
 * Later frames of an animated image are not decoded (what uses an image reads its first); a
 * truncated animated WebP fails on its container's length.
 */
export async function decodeWhole(
  input: Uint8Array,
  size: { readonly width: number; readonly height: number },
  options?: Pick<SharpOptions, 'limitInputPixels'>,
): Promise<void> {
  const cut = missingEnd(input);
  if (cut !== null) throw new ImageError(cut);
  await sharp(input, { ...options, failOn: 'error' })
    .extract({ left: size.width - 1, top: size.height - 1, width: 1, height: 1 })
    .raw()
    .toBuffer();
}

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A PNG's last chunk, whole: no data, its type, its CRC (PNG specification, 11.2.5). */
const pngEnd = Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
const gifSignature = Buffer.from('GIF8', 'latin1');
/** A GIF's trailer, its last byte (GIF89a, section 27). */
const gifTrailer = 0x3b;

/** Why the bytes of a PNG or GIF cannot be whole, or null. */
function missingEnd(input: Uint8Array): string | null {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  // Anywhere after the signature, not only last: some writers add bytes after it.
  if (bytes.subarray(0, 8).equals(pngSignature) && bytes.lastIndexOf(pngEnd) < 8) {
    return 'the PNG has no IEND chunk: it was cut short';
  }
  if (bytes.subarray(0, 4).equals(gifSignature) && bytes.at(-1) !== gifTrailer) {
    return 'the GIF does not end with its trailer: it was cut short';
  }
  return null;
}

/** Stops the sharp worker (tests, benchmarks); the next image starts a new one. */
export function closeSharp(): Promise<void> {
  return worker.close();
}
