import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import type { Clock } from '../../../src/shared/clock.ts';
import { Pace } from './pace.ts';

/**
 * One prediction on the Replicate stand-in, with the object and lifecycle of
 * `../shared/protocols/replicate.md` ("Prediction object", "Status semantics", "Output forms",
 * "Cancel", Cancel-After): created `starting`; `processing` with `started_at` and growing
 * `logs`; then `succeeded` (output as a URL, a list of URLs, an object, or an empty list),
 * `failed` with free-text `error` (model failures and content-policy refusals are not HTTP
 * errors), `canceled`, or `aborted` (deadline before start); `completed_at` and `metrics`
 * on terminal predictions; data removal (`output: null`, `data_removed: true`).
 */

/** Replicate's Stable Diffusion safety checker, word for word (protocol doc, "Errors"). */
export const nsfwError = 'NSFW content detected. Try running it again, or try a different prompt.';

/** A file the prediction outputs; `key` names it in an object output. */
export interface OutputFile {
  readonly bytes: Buffer;
  readonly extension: string;
  readonly key?: string;
}

/** What the test wants the next prediction to do. */
export interface ReplicateScript {
  /** Wait at every step (`start`, `log 1`…, `finish`) for `prediction.pace.advance()`. */
  readonly manual?: boolean;
  /** Log lines written while processing (default 2). */
  readonly steps?: number;
  /** End `failed` with this `error` text (e.g. `nsfwError`). */
  readonly fail?: string;
  /** How `output` is shaped (default `urls`). `empty` is a model that filtered every result. */
  readonly form?: 'url' | 'urls' | 'object' | 'empty';
  /** Output files (default: `num_outputs` PNGs of the input's width × height, or 64 × 64). */
  readonly files?: readonly OutputFile[];
}

export type PredictionStatus =
  | 'starting'
  | 'processing'
  | 'succeeded'
  | 'failed'
  | 'canceled'
  | 'aborted';

const terminal: readonly PredictionStatus[] = ['succeeded', 'failed', 'canceled', 'aborted'];

/** 26 characters of lower-case Crockford base32, like the ids in Replicate's examples. */
function predictionId(): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  return [...randomBytes(26)].map((byte) => alphabet[byte % 32]).join('');
}

export class Prediction {
  readonly id = predictionId();
  readonly pace: Pace;
  readonly files = new Map<string, OutputFile>();
  status: PredictionStatus = 'starting';
  logs = '';
  output: unknown = null;
  error: string | null = null;
  input: Record<string, unknown>;
  dataRemoved = false;
  deadline: Date | undefined;
  #model: string;
  #version: string;
  #script: ReplicateScript;
  #clock: Clock;
  #base: string;
  #created: Date;
  #started: Date | undefined;
  #completed: Date | undefined;
  #controller = new AbortController();
  #watchers = new Set<() => void>();

  constructor(
    details: { model: string; version: string; input: Record<string, unknown>; base: string },
    script: ReplicateScript,
    clock: Clock,
  ) {
    this.#model = details.model;
    this.#version = details.version;
    this.input = details.input;
    this.#base = details.base;
    this.#script = script;
    this.#clock = clock;
    this.#created = clock.now();
    this.pace = new Pace(script.manual === true);
  }

  get terminal(): boolean {
    return terminal.includes(this.status);
  }

  /** Resolves once the prediction is terminal. */
  settled(): Promise<void> {
    if (this.terminal) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (!this.terminal) return;
        this.#watchers.delete(check);
        resolve();
      };
      this.#watchers.add(check);
    });
  }

  /** Runs the script to a terminal state; cancellation ends it early. */
  async run(): Promise<void> {
    const signal = this.#controller.signal;
    try {
      await this.pace.step('start', signal);
      this.#started = this.#clock.now();
      this.#set('processing');
      const steps = this.#script.steps ?? 2;
      for (let step = 1; step <= steps; step += 1) {
        await this.pace.step(`log ${step}`, signal);
        this.logs += `${Math.round((step / steps) * 100)}%|${step}/${steps}\n`;
        this.#changed();
      }
      await this.pace.step('finish', signal);
      if (this.#script.fail !== undefined) {
        this.error = this.#script.fail;
        this.#finish('failed');
        return;
      }
      this.output = this.#shape(await this.#outputFiles());
      this.#finish('succeeded');
    } catch (error) {
      if (!signal.aborted) {
        this.error = `protocol stand-in error: ${String(error)}`;
        this.#finish('failed');
        return;
      }
      this.#finish(
        this.#started === undefined && signal.reason === 'deadline' ? 'aborted' : 'canceled',
      );
    }
  }

  /** `POST …/cancel`: a running prediction ends `canceled`; a terminal one is unchanged. */
  cancel(): void {
    if (!this.terminal) this.#controller.abort('cancel');
  }

  /** The `Cancel-After` deadline passes: `aborted` before start, `canceled` while running. */
  reachDeadline(): void {
    if (!this.terminal) this.#controller.abort('deadline');
  }

  /** Replicate's retention: input, output and logs deleted. */
  removeData(): void {
    this.input = {};
    this.output = null;
    this.logs = '';
    this.dataRemoved = true;
  }

  toJSON(): Record<string, unknown> {
    const url = `${this.#base}/v1/predictions/${this.id}`;
    const json: Record<string, unknown> = {
      id: this.id,
      model: this.#model,
      version: this.#version,
      input: this.input,
      logs: this.logs,
      output: this.output,
      data_removed: this.dataRemoved,
      error: this.error,
      status: this.status,
      source: 'api',
      created_at: this.#created.toISOString(),
      urls: { get: url, cancel: `${url}/cancel`, web: `${this.#base}/p/${this.id}` },
    };
    if (this.#started !== undefined) json.started_at = this.#started.toISOString();
    if (this.#completed !== undefined) json.completed_at = this.#completed.toISOString();
    if (this.deadline !== undefined) json.deadline = this.deadline.toISOString();
    if (this.#completed !== undefined) {
      const completed = this.#completed.getTime();
      const since = (from: Date) => (completed - from.getTime()) / 1000;
      // predict_time counts compute only, so a prediction that never ran has none.
      json.metrics = {
        ...(this.#started === undefined ? {} : { predict_time: since(this.#started) }),
        total_time: since(this.#created),
      };
    }
    return json;
  }

  #set(status: PredictionStatus): void {
    this.status = status;
    this.#changed();
  }

  #finish(status: PredictionStatus): void {
    this.#completed = this.#clock.now();
    this.#set(status);
  }

  #changed(): void {
    for (const watcher of [...this.#watchers]) watcher();
  }

  async #outputFiles(): Promise<readonly OutputFile[]> {
    if (this.#script.files !== undefined) return this.#script.files;
    const size = (value: unknown) => (typeof value === 'number' ? value : 64);
    const width = size(this.input.width);
    const height = size(this.input.height);
    const count = typeof this.input.num_outputs === 'number' ? this.input.num_outputs : 1;
    const png = await sharp({
      create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } },
    })
      .png()
      .toBuffer();
    return Array.from({ length: count }, () => ({ bytes: png, extension: 'png' }));
  }

  #shape(files: readonly OutputFile[]): unknown {
    const urls = files.map((file, index) => {
      const name = `out-${index}.${file.extension}`;
      this.files.set(name, file);
      return `${this.#base}/files/${this.id}/${name}`;
    });
    switch (this.#script.form ?? 'urls') {
      case 'url':
        return urls[0] ?? null;
      case 'object':
        return Object.fromEntries(
          files.map((file, index) => [file.key ?? `file${index}`, urls[index]]),
        );
      case 'empty':
        return [];
      default:
        return urls;
    }
  }
}
