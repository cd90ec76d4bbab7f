import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { encodeWav } from '../../../src/engines/speech/audio.ts';
import { type RecordedRequest, StandinServer, sendJson } from './standin-server.ts';

/**
 * Protocol stand-in for OpenAI's media endpoints, after `../shared/protocols/openai-media.md`
 * ("What a stand-in must reproduce"): `Authorization: Bearer` checked on every `/v1` route with
 * a 401 `invalid_api_key` (its message echoes the key, as OpenAI's "Incorrect API key provided"
 * does); every error in the `{"error": {message, type, param, code}}` envelope; `x-request-id`
 * on every answer. `POST /v1/images/generations` answers `n` PNGs of `size` as `b64_json`, or
 * as `url`s served by the stand-in under `/files/…`; a prompt containing "forbidden" is a 400
 * `moderation_blocked`. `POST /v1/audio/speech` answers a WAV of a tone (only `wav`). 429/5xx
 * through the base's `failNext`; `images` replaces the image answer (bad bytes, huge files).
 * `GET /v1/models` lists the models it answers for (OpenAI's "List models": `{object: "list",
 * data: [{id, object: "model", created, owned_by}]}`).
 * Not reproduced: edits, streaming, usage accounting, the other audio formats.
 */
export class OpenAiStandin {
  readonly server: StandinServer;
  readonly apiKey: string;
  /** Replaces the bytes of every image answered, when set. */
  images: ((width: number, height: number, format: string) => Promise<Buffer>) | null = null;
  readonly #files = new Map<string, Buffer>();

  constructor(apiKey: string) {
    this.apiKey = apiKey;
    this.server = new StandinServer((request, res) => this.#route(request, res));
  }

  get baseUrl(): string {
    return `${this.server.url}/v1`;
  }

  /** The `/v1` requests to `path` received so far (`/images/generations`, `/audio/speech`). */
  calls(path: string): RecordedRequest[] {
    return this.server.matching((r) => r.path === `/v1${path}`);
  }

  async #route(request: RecordedRequest, res: ServerResponse): Promise<void> {
    res.setHeader('x-request-id', `req_${randomUUID().replaceAll('-', '')}`);
    if (request.path.startsWith('/files/')) {
      const file = this.#files.get(request.path);
      if (file === undefined) return error(res, 404, 'No such file', 'invalid_request_error', null);
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(file.length) });
      res.end(file);
      return;
    }
    const given = String(request.headers.authorization ?? '');
    if (given !== `Bearer ${this.apiKey}`) {
      const shown = given.replace(/^Bearer /, '');
      return error(
        res,
        401,
        `Incorrect API key provided: ${shown}.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (request.method === 'POST' && request.path === '/v1/images/generations')
      return this.#images(body, res);
    if (request.method === 'POST' && request.path === '/v1/audio/speech') return speech(body, res);
    if (request.method === 'GET' && request.path === '/v1/models') return models(res);
    error(
      res,
      404,
      `Unknown request URL: ${request.method} ${request.path}.`,
      'invalid_request_error',
      'unknown_url',
    );
  }

  async #images(body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    if (typeof body.prompt !== 'string' || body.prompt === '') {
      return error(res, 400, 'prompt is required', 'invalid_request_error', null);
    }
    if (body.prompt.includes('forbidden')) {
      return error(
        res,
        400,
        'Your request was rejected by the safety system. safety_violations=[violence].',
        'image_generation_user_error',
        'moderation_blocked',
      );
    }
    // As OpenAI's API document has it: GPT image models always answer base64 and take
    // output_format, refusing response_format; dall-e models take response_format (url by
    // default), answer PNG, and know no output_format.
    const gptImage = /^(gpt-image|chatgpt-image)/.test(String(body.model));
    const unknown = gptImage ? 'response_format' : 'output_format';
    if (body[unknown] !== undefined) {
      return sendJson(res, 400, {
        error: {
          message: `Unknown parameter: '${unknown}'.`,
          type: 'invalid_request_error',
          param: unknown,
          code: 'unknown_parameter',
        },
      });
    }
    const [width, height] = String(body.size ?? '1024x1024')
      .split('x')
      .map(Number) as [number, number];
    const data = [];
    for (let i = 0; i < Number(body.n ?? 1); i++) {
      const format = gptImage ? String(body.output_format ?? 'png') : 'png';
      const bytes = await (this.images ?? tile)(width, height, format);
      if (!gptImage && body.response_format !== 'b64_json') {
        const path = `/files/${randomUUID()}.png`;
        this.#files.set(path, bytes);
        data.push({ url: `${this.server.url}${path}` });
      } else {
        data.push({ b64_json: bytes.toString('base64') });
      }
    }
    sendJson(res, 200, {
      created: 1_762_070_400,
      data,
      ...(gptImage ? { output_format: body.output_format ?? 'png', size: body.size } : {}),
    });
  }
}

function tile(width: number, height: number, format: string): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#3366aa' } })
    .toFormat(format as 'png' | 'jpeg' | 'webp')
    .toBuffer();
}

/** OpenAI's built-in voices (openai-media.md); any other is a custom voice's `{"id"}`. */
const builtinVoices = new Set([
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'onyx',
  'nova',
  'sage',
  'shimmer',
  'verse',
  'marin',
  'cedar',
]);

function speech(body: Record<string, unknown>, res: ServerResponse): void {
  const voice = body.voice as unknown;
  const known =
    (typeof voice === 'string' && builtinVoices.has(voice)) ||
    (typeof voice === 'object' &&
      voice !== null &&
      typeof (voice as { id?: unknown }).id === 'string');
  if (!known) {
    error(
      res,
      400,
      `Invalid value for 'voice': ${JSON.stringify(voice)}.`,
      'invalid_request_error',
      'invalid_value',
    );
    return;
  }
  if (typeof body.input !== 'string' || body.input.length > 4096) {
    error(
      res,
      400,
      "Invalid 'input': string too long. Expected a string with maximum length 4096.",
      'invalid_request_error',
      'string_above_max_length',
    );
    return;
  }
  if (body.response_format !== 'wav') {
    error(res, 400, 'This stand-in speaks wav only', 'invalid_request_error', null);
    return;
  }
  const rate = 24_000;
  const samples = Int16Array.from({ length: rate / 2 }, (_, i) =>
    Math.round(8000 * Math.sin(i / 8)),
  );
  res.writeHead(200, { 'content-type': 'audio/wav' });
  res.end(encodeWav(samples, rate));
}

function error(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null,
): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}

/** OpenAI's "List models" answer, for the models this stand-in answers for. */
function models(res: ServerResponse): void {
  const ids = ['gpt-image-1', 'dall-e-3', 'dall-e-2', 'gpt-4o-mini-tts', 'tts-1', 'tts-1-hd'];
  sendJson(res, 200, {
    object: 'list',
    data: ids.map((id) => ({ id, object: 'model', created: 1_698_785_189, owned_by: 'system' })),
  });
}
