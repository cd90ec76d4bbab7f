import type { ServerResponse } from 'node:http';
import { type Clock, systemClock } from '../../../src/shared/clock.ts';
import { ReplicateFiles } from './replicate-files.ts';
import { Prediction, type ReplicateScript } from './replicate-prediction.ts';
import { invalidFields, parseCancelAfter, parsePreferWait, problem } from './replicate-wire.ts';
import { type RecordedRequest, StandinServer, sendJson } from './standin-server.ts';

/**
 * Protocol stand-in for Replicate's predictions API (issue 17's `replicate` engine), after
 * `../shared/protocols/replicate.md` ("What a stand-in must reproduce"): `POST /v1/predictions`
 * (`version` as `owner/name`, `owner/name:<id>` or a bare id) and
 * `POST /v1/models/{owner}/{name}/predictions`, request bodies limited to their documented
 * keys; `Authorization: Bearer` (or the older `Token`) checked on every `/v1` route with 401
 * problem bodies (texts from replicate/replicate-python#47); unknown model 404, unknown version
 * 422, missing input 422; `Prefer: wait[=N]` holding the response until terminal or N seconds;
 * `Cancel-After` setting `deadline`; `GET /v1/predictions/{id}`; `POST …/cancel` (idempotent on
 * terminal predictions); 429 `{"detail": …}` with `Retry-After` via `throttle`; output files
 * served by the stand-in itself under `/files/…`, to the token only, as files on the API's
 * own origin are.
 * `POST /v1/files` and file inputs (replicate-files.ts). `GET /v1/account` (the token's
 * account, which the engine's probe asks for).
 * Not reproduced: webhooks, SSE streams, deployments, listing predictions, file downloads.
 */

/** A model the stand-in hosts; without `version` it is an official model (`version: "hidden"`). */
export interface HostedModel {
  readonly name: string;
  readonly version?: string;
  /** Input keys the model requires. */
  readonly required?: readonly string[];
  /** Input keys that take a file: a `data:` URI or an HTTP(S) URL (e.g. a Files API `urls.get`). */
  readonly fileInputs?: readonly string[];
}

export interface ReplicateStandinOptions {
  readonly token?: string;
  readonly models?: readonly HostedModel[];
  readonly clock?: Clock;
  /** How long one second of `Prefer: wait=N` lasts here (default 1000 ms). */
  readonly secondMs?: number;
  /** Largest `POST /v1/files` upload (default 100 MB, Replicate's limit). */
  readonly maxFileBytes?: number;
}

const createKeys = ['input', 'stream', 'webhook', 'webhook_events_filter'];

export class ReplicateStandin {
  /** Recorded requests, `received` signals, faults and holds. */
  readonly http: StandinServer;
  readonly token: string;
  readonly models: readonly HostedModel[];
  readonly predictions = new Map<string, Prediction>();
  readonly files: ReplicateFiles;
  #clock: Clock;
  #secondMs: number;
  #scripts: ReplicateScript[] = [];
  #order: Prediction[] = [];
  #handedOut = 0;
  #watchers = new Set<() => void>();
  #runs = new Set<Promise<void>>();
  #waits = new Set<() => void>();
  #mostAtOnce = 0;

  private constructor(options: ReplicateStandinOptions) {
    this.token = options.token ?? 'r8_standin_token';
    this.models = options.models ?? [
      { name: 'black-forest-labs/flux-schnell', required: ['prompt'] },
    ];
    this.#clock = options.clock ?? systemClock;
    this.#secondMs = options.secondMs ?? 1000;
    this.files = new ReplicateFiles(this.#clock, options.maxFileBytes ?? 100 * 1024 * 1024);
    this.http = new StandinServer((request, res) => this.#route(request, res));
  }

  static async start(options: ReplicateStandinOptions = {}): Promise<ReplicateStandin> {
    const standin = new ReplicateStandin(options);
    await standin.http.listen();
    return standin;
  }

  /**
   * The most predictions it had unfinished at once: a caller that holds capacity for it
   * (a backend's `maxConcurrent`) never goes past that.
   */
  get mostAtOnce(): number {
    return this.#mostAtOnce;
  }

  /** The API base an engine is configured with, e.g. `http://127.0.0.1:4242/v1`. */
  get apiBase(): string {
    return `${this.http.url}/v1`;
  }

  /** Behaviour of the next predictions, in creation order; unscripted ones just succeed. */
  script(...scripts: ReplicateScript[]): void {
    this.#scripts.push(...scripts);
  }

  /** The next `times` creates answer 429 with Replicate's throttling body (and Retry-After). */
  throttle(times: number, retryAfterSeconds?: number): void {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
    const detail = `Request was throttled. Your rate limit resets in ~${retryAfterSeconds ?? 30}s.`;
    this.http.failNext((r) => r.method === 'POST' && r.path.endsWith('/predictions'), times, {
      status: 429,
      headers,
      body: JSON.stringify({ detail }),
    });
  }

  /**
   * Resolves with the next created prediction that no earlier `nextPrediction` returned: the
   * first call gets the first prediction ever created, the second the second, and so on.
   */
  nextPrediction(): Promise<Prediction> {
    const index = this.#handedOut;
    this.#handedOut += 1;
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const prediction = this.#order[index];
        if (prediction === undefined) return;
        clearTimeout(timer);
        this.#watchers.delete(check);
        resolve(prediction);
      };
      const timer = setTimeout(() => {
        this.#watchers.delete(check);
        const seen = this.http.requests.map((r) => `${r.method} ${r.path}`).join(', ');
        reject(new Error(`prediction #${index + 1} was never created; received: [${seen}]`));
      }, 10_000); // 10 seconds: a prediction that never comes fails the test
      this.#watchers.add(check);
      check();
    });
  }

  /**
   * Ends every `Prefer: wait` being held now, as if its N seconds had passed: the create
   * answers with the prediction as it stands (still running unless it settled).
   */
  expireWaits(): void {
    for (const expire of [...this.#waits]) expire();
  }

  async close(): Promise<void> {
    this.expireWaits();
    for (const prediction of this.predictions.values()) prediction.cancel();
    await Promise.all(this.#runs);
    await this.http.close();
  }

  async #route(request: RecordedRequest, res: ServerResponse): Promise<void> {
    const file = /^\/files\/([^/]+)\/([^/]+)$/.exec(request.path);
    if (request.method === 'GET' && file !== null) {
      // Files on the API's own origin are served to its token only.
      const refused = this.#authenticate(request);
      if (refused !== undefined) return problem(res, 401, 'Unauthenticated', refused);
      const found = this.predictions.get(file[1]!)?.files.get(file[2]!);
      if (found === undefined) return problem(res, 404, 'Not found', 'File not found');
      const type = mimeOf(found.extension) ?? 'application/octet-stream';
      return this.http.sendBytes(request, res, found.bytes, { 'content-type': type });
    }
    if (!request.path.startsWith('/v1/')) return problem(res, 404, 'Not found', 'Not found');
    const denied = this.#authenticate(request);
    if (denied !== undefined) return problem(res, 401, 'Unauthenticated', denied);

    if (request.method === 'GET' && request.path === '/v1/account') {
      // "Get the authenticated account": the token's owner.
      return sendJson(res, 200, {
        type: 'organization',
        username: 'atelier-standin',
        name: 'Atelier protocol stand-in',
        github_url: null,
      });
    }
    if (request.method === 'POST' && request.path === '/v1/files') {
      return this.files.create(request, res, this.http.url);
    }
    const fileId = /^\/v1\/files\/([^/]+)$/.exec(request.path)?.[1];
    if (request.method === 'GET' && fileId !== undefined) return this.files.get(fileId, res);
    const model = /^\/v1\/models\/([^/]+\/[^/]+)\/predictions$/.exec(request.path)?.[1];
    if (request.method === 'POST' && model !== undefined)
      return this.#createForModel(request, res, model);
    if (request.method === 'POST' && request.path === '/v1/predictions')
      return this.#createForVersion(request, res);
    const id = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(request.path);
    const prediction = id === null ? undefined : this.predictions.get(id[1]!);
    if (id !== null && prediction === undefined) {
      return problem(res, 404, 'Not found', 'The requested resource could not be found.');
    }
    if (prediction !== undefined && request.method === 'GET' && id?.[2] === undefined) {
      return sendJson(res, 200, prediction);
    }
    if (prediction !== undefined && request.method === 'POST' && id?.[2] === '/cancel') {
      prediction.cancel();
      await prediction.settled();
      return sendJson(res, 200, prediction);
    }
    return problem(res, 404, 'Not found', 'The requested resource could not be found.');
  }

  /** The 401 detail, or undefined when the token is right. */
  #authenticate(request: RecordedRequest): string | undefined {
    const header = request.headers.authorization;
    if (typeof header !== 'string' || header === '')
      return 'You did not pass an authentication token';
    const match = /^(Bearer|Token) (.+)$/.exec(header);
    return match?.[2] === this.token ? undefined : 'You did not pass a valid authentication token';
  }

  async #createForModel(
    request: RecordedRequest,
    res: ServerResponse,
    name: string,
  ): Promise<void> {
    const hosted = this.models.find((m) => m.name === name);
    if (hosted === undefined)
      return problem(res, 404, 'Not found', 'The requested resource could not be found.');
    return this.#create(request, res, hosted, createKeys);
  }

  async #createForVersion(request: RecordedRequest, res: ServerResponse): Promise<void> {
    const version = (request.json as { version?: unknown } | undefined)?.version;
    const hosted = this.models.find((m) =>
      m.version === undefined
        ? version === m.name
        : version === m.version || version === `${m.name}:${m.version}`,
    );
    if (hosted === undefined) {
      const detail =
        "The specified version does not exist (or perhaps you don't have permission to use it?)";
      return problem(res, 422, 'Invalid version or not permitted', detail);
    }
    return this.#create(request, res, hosted, [...createKeys, 'version']);
  }

  async #create(
    request: RecordedRequest,
    res: ServerResponse,
    hosted: HostedModel,
    allowed: string[],
  ): Promise<void> {
    const body = request.json;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return problem(res, 400, 'Bad request', 'The request body is not a JSON object.');
    }
    const invalid = invalidFields(body as Record<string, unknown>, allowed, hosted);
    if (invalid.length > 0) return problem(res, 422, 'Input validation failed', invalid.join('\n'));
    const input = (body as { input: Record<string, unknown> }).input;
    const wait = parsePreferWait(request.headers.prefer);
    const cancelAfter = parseCancelAfter(request.headers['cancel-after']);
    if (wait === 'invalid' || cancelAfter === 'invalid') {
      return problem(res, 400, 'Bad request', 'Invalid Prefer or Cancel-After header.');
    }

    const prediction = new Prediction(
      {
        model: hosted.name,
        version: hosted.version ?? 'hidden',
        input,
        base: this.http.url,
      },
      this.#scripts.shift() ?? {},
      this.#clock,
    );
    if (cancelAfter !== undefined)
      prediction.deadline = new Date(this.#clock.now().getTime() + cancelAfter * 1000);
    this.predictions.set(prediction.id, prediction);
    this.#order.push(prediction);
    const unfinished = [...this.predictions.values()].filter((p) => !p.terminal).length;
    this.#mostAtOnce = Math.max(this.#mostAtOnce, unfinished);
    const running = prediction.run().finally(() => this.#runs.delete(running));
    this.#runs.add(running);
    for (const watcher of [...this.#watchers]) watcher();
    if (wait !== undefined) await this.#waitFor(prediction, wait);
    sendJson(res, prediction.terminal || wait === undefined ? 201 : 202, prediction);
  }

  /** `Prefer: wait=N`: until the prediction is terminal or N "seconds" pass. */
  async #waitFor(prediction: Prediction, seconds: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let expire: (() => void) | undefined;
    try {
      await Promise.race([
        prediction.settled(),
        new Promise<void>((resolve) => {
          expire = resolve;
          this.#waits.add(resolve);
          timer = setTimeout(resolve, seconds * this.#secondMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (expire !== undefined) this.#waits.delete(expire);
    }
  }
}

function mimeOf(extension: string): string | undefined {
  return {
    png: 'image/png',
    webp: 'image/webp',
    jpg: 'image/jpeg',
    mp4: 'video/mp4',
    wav: 'audio/wav',
  }[extension];
}
