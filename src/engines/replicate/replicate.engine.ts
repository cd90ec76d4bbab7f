import { setTimeout as wait } from 'node:timers/promises';
import type { Engine, EngineContext, EngineRequest, EngineResult } from '../engine.ts';
import { RunStopped, stopEndsTask } from '../engine.ts';
import { probeServer } from '../remote/probe-server.ts';
import { ProviderUnreachableError } from '../remote/provider-call.ts';
import { redact } from '../remote/provider-failure.ts';
import type { RemoteDeps } from '../remote/remote-deps.ts';
import { type PredictionOutcome, ReplicateApi } from './replicate-api.ts';
import { CreateUnanswered } from './replicate-create-call.ts';
import { failure, inputFailure, predictionFailure } from './replicate-failure.ts';
import { sendableValues } from './replicate-files.ts';
import { defaultBaseUrl, type ReplicateOptions, readOptions } from './replicate-options.ts';
import { collectOutputs } from './replicate-outputs.ts';
import { isTerminal, type Prediction, progressOf } from './replicate-prediction.ts';
import { fillTemplate, placeholdersIn } from './replicate-template.ts';
import { slotValues, unfillable } from './replicate-values.ts';

/** The prefix of this engine's task checkpoint: `replicate:<prediction id>`. */
const checkpointPrefix = 'replicate:';

/**
 * Replicate's predictions API (issue 17): images, videos, speech and talking avatars hosted
 * there, each model's input built from its `input` template. A run creates a prediction (or
 * resumes the one an earlier attempt of the task created: its id is the task's checkpoint),
 * polls it until it ends, reporting the progress its logs print, cancels it when the task is
 * cancelled or times out, and downloads and checks its output files.
 */
export function replicateEngine(deps: RemoteDeps): Engine {
  return {
    name: 'replicate',
    kinds: ['image', 'video', 'speech', 'avatar'],
    // Replicate's `GET /v1/account`: the token's account, answered by the API when it is up.
    probe(options, signal) {
      const baseUrl = (
        typeof options.baseUrl === 'string' ? options.baseUrl : defaultBaseUrl
      ).replace(/\/+$/, '');
      const token =
        typeof options.apiKeyEnv === 'string' ? deps.secret(options.apiKeyEnv) : undefined;
      return probeServer(deps, 'replicate', `${baseUrl}/account`, token, signal);
    },
    checkOptions(model) {
      const read = readOptions(model.kind, model.engineOptions);
      if (!read.ok) return read.problems;
      // A run reads only engineOptions, not the model's limit: a longer limit needs its own.
      const limit = model.maxRunSeconds;
      if (limit !== undefined && model.engineOptions.cancelAfterSeconds === undefined) {
        const fallback = read.options.cancelAfterSeconds;
        if (limit > fallback) {
          return [
            `engineOptions.cancelAfterSeconds must be set (at least maxRunSeconds, ${limit}) when maxRunSeconds is above the default Cancel-After of ${fallback} seconds`,
          ];
        }
      }
      return [];
    },
    async run(request, context) {
      const read = readOptions(request.kind, request.options);
      if (!read.ok)
        return failure(
          'failed',
          `The model's Replicate options are invalid: ${read.problems.join('; ')}`,
        );
      const token = deps.secret(read.options.apiKeyEnv);
      if (token === undefined)
        return failure('failed', `${read.options.apiKeyEnv} holds no Replicate token`);
      const result = await runPrediction(deps, read.options, token, request, context);
      // What is logged may not carry the token, whatever path (Replicate's words, an
      // unreachable API, an output error) wrote it.
      return result.ok || result.detail === undefined
        ? result
        : { ...result, detail: redact(result.detail, [token]) };
    },
  };
}

async function runPrediction(
  deps: RemoteDeps,
  options: ReplicateOptions,
  token: string,
  request: EngineRequest,
  context: EngineContext,
): Promise<EngineResult> {
  const { signal } = context;
  const api = new ReplicateApi(deps, options, token);
  const started = (await resume(api, context)) ?? (await start(api, options, request, context));
  if (!started.ok) return started;
  let followed: PredictionOutcome;
  try {
    followed = await follow(api, started.prediction, context, options.pollMs);
  } catch (error) {
    // Cancelled or timed out: the task is over, so is the prediction. A lost lease or a
    // shutdown leaves it running for the attempt that takes the task over; any other error
    // (Replicate unreachable for a while) is retried by the runner, which resumes it too.
    if (signal.aborted && stopEndsTask(signal)) await api.cancel(started.prediction);
    throw error;
  }
  if (!followed.ok) {
    await api.cancel(started.prediction);
    return followed;
  }
  const prediction = followed.prediction;
  if (prediction.status !== 'succeeded') return predictionFailure(prediction, [token]);
  return collectOutputs(deps, options, token, request, prediction, signal);
}

/**
 * Creates the prediction (input files inline or uploaded first) and remembers its id with the
 * task before anything else.
 */
async function start(
  api: ReplicateApi,
  options: ReplicateOptions,
  request: EngineRequest,
  context: EngineContext,
): Promise<PredictionOutcome> {
  const used = placeholdersIn(options.input);
  const refused = unfillable(request, used);
  if (refused !== null) return inputFailure(refused);
  let created: PredictionOutcome;
  try {
    const upload = (bytes: Buffer, type: string) => api.upload(bytes, type, context.signal);
    const values = await sendableValues(slotValues(request), used, options.inlineMaxBytes, upload);
    if (!values.ok) return values;
    context.signal.throwIfAborted();
    const create = createSignal(context.signal);
    try {
      created = await api.create(fillTemplate(options.input, values.values), create.signal);
    } finally {
      create.release();
    }
  } catch (error) {
    if (error instanceof ProviderUnreachableError || error instanceof CreateUnanswered)
      return failure('unreachable', `${error.message}: ${error.detail}`);
    throw error;
  }
  if (!created.ok) return created;
  await remember(api, created.prediction, context);
  const { signal } = context;
  if (signal.aborted) {
    if (stopEndsTask(signal)) await api.cancel(created.prediction);
    throw signal.reason;
  }
  return created;
}

/**
 * The signal of the create call. Replicate makes the prediction as soon as it reads the
 * request, and only the answer names it: a create aborted by a cancel or a lost lease would
 * leave a prediction nobody can cancel (and the next attempt would pay for another). So those
 * stops wait for the answer (at most `waitSeconds` with `Prefer: wait`); the run's deadline and
 * a shutdown still abort it, bounded by `Cancel-After` at Replicate.
 */
function createSignal(task: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const follow = () => {
    const why: unknown = task.reason;
    const waits =
      why instanceof RunStopped && (why.reason === 'cancelled' || why.reason === 'lost');
    if (!waits) controller.abort(why);
  };
  task.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    release: () => task.removeEventListener('abort', follow),
  };
}

/**
 * Saves the prediction's id as the task's checkpoint. When that fails (the lease was lost, the
 * task cancelled meanwhile, the database down) no later attempt can find the prediction and
 * would create (and pay for) another, so this one is cancelled before the error goes on.
 */
async function remember(
  api: ReplicateApi,
  prediction: Prediction,
  context: EngineContext,
): Promise<void> {
  try {
    await context.checkpoint?.save(`${checkpointPrefix}${prediction.id}`);
  } catch (error) {
    await api.cancel(prediction);
    throw error;
  }
}

/** The prediction an earlier attempt of this task started, if Replicate still knows it. */
async function resume(
  api: ReplicateApi,
  context: EngineContext,
): Promise<PredictionOutcome | undefined> {
  const saved = context.checkpoint?.saved;
  if (saved === null || saved === undefined || !saved.startsWith(checkpointPrefix))
    return undefined;
  const found = await api.exists(saved.slice(checkpointPrefix.length), context.signal);
  return found === 'unknown' ? undefined : found;
}

/**
 * Polls until the prediction ends, every `pollMs`, reporting progress; the signal stops it.
 * An error answer of Replicate's (after the kit's retries) ends the task.
 */
async function follow(
  api: ReplicateApi,
  first: Prediction,
  context: EngineContext,
  pollMs: number,
): Promise<PredictionOutcome> {
  let prediction = first;
  for (;;) {
    // Reported at every read, not only on change: the runner keeps at most one write per
    // quarter second, so a value dropped there is sent again with the next poll.
    const progress = progressOf(prediction);
    if (progress !== null) context.reportProgress(progress);
    if (isTerminal(prediction.status)) return { ok: true, prediction };
    try {
      await wait(pollMs, undefined, { signal: context.signal });
    } catch (error) {
      throw context.signal.aborted ? context.signal.reason : error;
    }
    const read = await api.read(prediction, context.signal);
    if (!read.ok) return read;
    prediction = read.prediction;
  }
}
