import type { EngineFailure } from '../engine.ts';
import { callProvider } from '../remote/provider-call.ts';
import { readBody } from '../remote/read-body.ts';
import { backendName, type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';
import { sendCreate } from './replicate-create-call.ts';
import { apiFailure, failure, inputFailure } from './replicate-failure.ts';
import { uploadName } from './replicate-files.ts';
import type { ReplicateOptions } from './replicate-options.ts';
import { type Prediction, readPrediction } from './replicate-prediction.ts';

/** A prediction, or the failure that ends the task. */
export type PredictionOutcome =
  | { readonly ok: true; readonly prediction: Prediction }
  | EngineFailure;

/** An uploaded file's URL, or the failure that ends the task. */
export type Uploaded = { readonly ok: true; readonly url: string } | EngineFailure;

/** The largest API answer read: a prediction carries its logs, which can grow long. */
const maxAnswerBytes = 16 * 1024 * 1024; // 16 MiB

/** A JSON answer read within the cap; null when it is too big or not JSON. */
async function readJson(response: Response): Promise<unknown> {
  try {
    return JSON.parse((await readBody(response, maxAnswerBytes)).toString('utf8'));
  } catch (error) {
    if (error instanceof RemoteOutputError || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** How long a cancel may take once the task is over (its own signal is already aborted). */
const cancelTimeoutMs = 15_000; // 15 seconds

/**
 * Replicate's predictions API for one run (protocol doc, "Endpoints"): create, read, cancel,
 * each through the kit's `callProvider` (timeouts; 429/5xx/network retried after `Retry-After`
 * within the task's signal), with the token as `Authorization: Bearer`.
 */
export class ReplicateApi {
  readonly #deps: RemoteDeps;
  readonly #options: ReplicateOptions;
  readonly #token: string;
  readonly #backend: string;

  constructor(deps: RemoteDeps, options: ReplicateOptions, token: string) {
    this.#deps = deps;
    this.#options = options;
    this.#token = token;
    this.#backend = backendName('replicate', options.baseUrl);
  }

  /**
   * `POST /models/{owner}/{name}/predictions`, or `POST /predictions` with the version. With
   * `waitSeconds`, `Prefer: wait=N` holds the answer until the prediction ends (or N seconds);
   * `Cancel-After` gives it a deadline at Replicate (`cancelAfterSeconds`, always set).
   */
  async create(input: Record<string, unknown>, signal: AbortSignal): Promise<PredictionOutcome> {
    const { baseUrl, model, version, waitSeconds, cancelAfterSeconds } = this.#options;
    const url =
      model === null ? `${baseUrl}/predictions` : `${baseUrl}/models/${model}/predictions`;
    const body = model === null ? { version, input } : { input };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (waitSeconds !== null) headers.prefer = `wait=${waitSeconds}`;
    headers['cancel-after'] = `${cancelAfterSeconds}s`;
    // Not #call: a create is sent again only when it surely made nothing (sendCreate).
    const response = await sendCreate(this.#deps, {
      backend: this.#backend,
      url,
      signal,
      init: {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${this.#token}` },
        body: JSON.stringify(body),
      },
    });
    return this.#read('the prediction request', response);
  }

  /**
   * `POST /files` (multipart `content`): the uploaded file's `urls.get`, which a file input
   * takes. Over Replicate's size limit (413) the request is refused as input (code 4).
   */
  async upload(bytes: Buffer, type: string, signal: AbortSignal): Promise<Uploaded> {
    const form = new FormData();
    form.set('content', new Blob([new Uint8Array(bytes)], { type }), uploadName(type));
    form.set('type', type);
    const response = await this.#call(`${this.#options.baseUrl}/files`, 'POST', signal, {}, form);
    if (!response.ok) {
      if (response.status === 413) {
        await response.body?.cancel();
        return inputFailure('An input file is larger than the model server accepts.');
      }
      return apiFailure('a file upload', response, [this.#token]);
    }
    const body = (await readJson(response)) as { urls?: { get?: unknown } } | null;
    const url = body?.urls?.get;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
      return failure('failed', 'Replicate answered a file upload with no file URL');
    }
    return { ok: true, url };
  }

  /** `GET` the prediction's `urls.get`. */
  async read(prediction: Prediction, signal: AbortSignal): Promise<PredictionOutcome> {
    return this.#read('a prediction read', await this.#call(prediction.getUrl, 'GET', signal));
  }

  /** Whether a prediction of an earlier attempt is still known to Replicate (404: it is not). */
  async exists(id: string, signal: AbortSignal): Promise<PredictionOutcome | 'unknown'> {
    const url = `${this.#options.baseUrl}/predictions/${encodeURIComponent(id)}`;
    const response = await this.#call(url, 'GET', signal);
    if (response.status === 404) {
      await response.body?.cancel();
      return 'unknown';
    }
    return this.#read('a prediction read', response);
  }

  /**
   * `POST urls.cancel`, best effort: the task is over whatever Replicate answers, so failures
   * are swallowed, and its own (already aborted) signal is replaced by a short deadline.
   */
  async cancel(prediction: Prediction): Promise<void> {
    try {
      const signal = AbortSignal.timeout(cancelTimeoutMs);
      const response = await this.#call(prediction.cancelUrl, 'POST', signal);
      await response.body?.cancel();
    } catch {
      // unreachable now: Replicate's own deadline or the model's end stops it
    }
  }

  #call(
    url: string,
    method: string,
    signal: AbortSignal,
    headers: Record<string, string> = {},
    body?: string | FormData,
  ): Promise<Response> {
    return callProvider(this.#deps, {
      backend: this.#backend,
      url,
      signal,
      init: {
        method,
        headers: { ...headers, authorization: `Bearer ${this.#token}` },
        ...(body === undefined ? {} : { body }),
      },
    });
  }

  async #read(what: string, response: Response): Promise<PredictionOutcome> {
    if (!response.ok) return apiFailure(what, response, [this.#token]);
    const prediction = readPrediction(await readJson(response), this.#options.baseUrl);
    if (prediction === null)
      return failure('failed', `Replicate answered ${what} with no prediction`);
    return { ok: true, prediction };
  }
}
