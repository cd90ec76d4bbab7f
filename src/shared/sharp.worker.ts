/**
 * Worker process entry (started by `sharp` in sharp.ts): runs the image pipelines the server
 * sends, several at once (sharp works on libuv's threads), so that libvips' code, its threads'
 * memory and the heap it leaves fragmented belong to this process, which exits when idle.
 */
import sharp, { type Sharp } from 'sharp';
import { type ImageAnswer, type ImageJob, pipelineEnds, pipelineSteps } from './sharp-protocol.ts';

const send = process.send?.bind(process);
if (send === undefined) throw new Error('sharp.worker.ts must run in a worker process (fork)');

// The server gone (its end closes the channel): nothing is left to answer.
process.on('disconnect', () => process.exit(0));

const steps = new Set<string>(pipelineSteps);
const ends = new Set<string>(pipelineEnds);

process.on('message', (request: ImageJob & { id: number }) => {
  run(request).then(
    (value) => reply({ id: request.id, ok: true, value }),
    (error: unknown) =>
      reply({
        id: request.id,
        ok: false,
        message: error instanceof Error ? error.message : String(error),
      }),
  );
});

async function run(job: ImageJob): Promise<unknown> {
  let image = sharp(job.input, job.options);
  for (const [step, args] of job.steps) {
    if (!steps.has(step)) throw new Error(`"${step}" is not a pipeline step`);
    image = Reflect.apply(image[step], image, args) as Sharp;
  }
  if (!ends.has(job.end)) throw new Error(`"${job.end}" does not end a pipeline`);
  return Reflect.apply(image[job.end], image, job.endArgs) as Promise<unknown>;
}

function reply(answer: ImageAnswer): void {
  send!(answer);
}
