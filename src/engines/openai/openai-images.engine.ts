import type { ImageSettings } from '../../domain/kinds/image.kind.ts';
import type { ModelDefinition } from '../../domain/model.ts';
import { type Engine, type EngineResult, wrongKind } from '../engine.ts';
import { readBody } from '../remote/read-body.ts';
import { backendName, type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';
import { imageOutputs } from './image-outputs.ts';
import { openaiCall } from './openai-call.ts';
import {
  commonOptionProblems,
  probeOpenAi,
  readOptions,
  requestHeaders,
} from './openai-options.ts';
import { postUntilFinished } from './post-until-finished.ts';

const name = 'openai-images';

/**
 * The most of an images answer read, whatever `n` and `maxOutputBytes` say: the answer is
 * buffered whole, so a cap that grew with `n` (50 MiB × 10 × 4/3) would let one task hold
 * hundreds of MiB.
 */
export const maxAnswerBytes = 200 * 1024 * 1024; // 200 MiB

/**
 * Which of OpenAI's image APIs a model speaks, by its name (OpenAI's API document): GPT image
 * models take `output_format`, always answer base64 and refuse `response_format` (400
 * `unknown_parameter`); dall-e models take `response_format`, answer PNG and know no
 * `output_format`. Another server that copies the API (LocalAI, Atelier's own `/v1`) is sent
 * both, as such servers take or ignore each.
 */
export type ImageApi = 'gpt-image' | 'dall-e' | 'other';

export function imageApiOf(model: string): ImageApi {
  if (/^(gpt-image|chatgpt-image)/.test(model)) return 'gpt-image';
  if (/^dall-e/.test(model)) return 'dall-e';
  return 'other';
}

/**
 * `openai-images`: `POST {baseUrl}/images/generations` of OpenAI and the servers that copy its
 * API (LocalAI, Atelier's own `/v1`…). Sent: model, prompt (the negative prompt appended as
 * "Avoid: …", the API having no field for it, unless `negativePrompt: "drop"`), n, size,
 * `quality` when set, and, as the model's API takes them ({@link imageApiOf}),
 * `response_format` (`responseFormat`, default b64_json; null sends none) and `output_format`
 * (`outputFormat: false` sends none). The seed is not sent: the API takes none.
 */
export function openaiImagesEngine(deps: RemoteDeps): Engine {
  return {
    name,
    kinds: ['image'],
    probe: (options, signal) => probeOpenAi(deps, name, options, signal),
    checkOptions: (model) => imageOptionProblems(model),
    async run(request, { signal, reportProgress }): Promise<EngineResult> {
      if (request.kind !== 'image') return wrongKind(name, request.kind);
      const o = readOptions(request.options);
      const call = openaiCall(deps, name, o, 'an unusable image');
      const settings = request.settings;
      try {
        const answer = await postUntilFinished(deps, {
          backend: backendName(name, o.baseUrl),
          url: `${o.baseUrl}/images/generations`,
          init: {
            method: 'POST',
            headers: requestHeaders(deps, o, request.taskId),
            body: JSON.stringify(requestBody(o.model, settings, request.options)),
          },
          signal,
          maxAttempts: o.maxAttempts,
        });
        if (!answer.ok) return call.refused(answer);
        const { response } = answer;
        // Base64 makes 4 bytes of 3; the envelope around the images is small.
        const asked = Math.ceil((o.maxOutputBytes * settings.count * 4) / 3) + 65_536;
        const limit = Math.min(asked, maxAnswerBytes);
        const body = parseJson(await readBody(response, limit));
        const fetch = {
          providerOrigin: new URL(o.baseUrl).origin,
          maxBytes: o.maxOutputBytes,
          signal,
        };
        const outputs = await imageOutputs(body, settings, deps, fetch);
        reportProgress(1);
        return { ok: true, outputs };
      } catch (error) {
        signal.throwIfAborted();
        return call.failed(error);
      }
    },
  };
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new RemoteOutputError('the answer is not JSON');
  }
}

function requestBody(
  model: string,
  settings: ImageSettings,
  options: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const avoid =
    settings.negativePrompt !== null && options.negativePrompt !== 'drop'
      ? `\n\nAvoid: ${settings.negativePrompt}`
      : '';
  const api = imageApiOf(model);
  const responseFormat =
    options.responseFormat === undefined
      ? api === 'gpt-image'
        ? null
        : 'b64_json'
      : options.responseFormat;
  const outputFormat = options.outputFormat ?? api !== 'dall-e';
  return {
    model,
    prompt: `${settings.prompt}${avoid}`,
    n: settings.count,
    size: `${settings.width}x${settings.height}`,
    ...(responseFormat === null ? {} : { response_format: responseFormat }),
    ...(outputFormat === false ? {} : { output_format: settings.format }),
    ...(typeof options.quality === 'string' ? { quality: options.quality } : {}),
  };
}

function imageOptionProblems(model: ModelDefinition): string[] {
  const options = model.engineOptions;
  const problems = commonOptionProblems(options);
  const format = options.responseFormat;
  if (format !== undefined && format !== null && format !== 'b64_json' && format !== 'url') {
    problems.push('engineOptions.responseFormat must be "b64_json", "url" or null (send none)');
  }
  if (options.outputFormat !== undefined && typeof options.outputFormat !== 'boolean') {
    problems.push('engineOptions.outputFormat must be true or false (send output_format or not)');
  }
  // What OpenAI refuses, refused at start rather than on every task.
  const api = typeof options.model === 'string' ? imageApiOf(options.model) : 'other';
  if (api === 'gpt-image' && format !== undefined && format !== null) {
    problems.push(
      `${String(options.model)} answers base64 and refuses response_format: leave engineOptions.responseFormat out`,
    );
  }
  if (api === 'dall-e') {
    if (options.outputFormat === true) {
      problems.push(
        `${String(options.model)} has no output_format: leave engineOptions.outputFormat out`,
      );
    }
    if (model.kind === 'image' && model.capabilities.formats.some((f) => f !== 'png')) {
      problems.push(
        `${String(options.model)} answers PNG only: capabilities.formats must be ["png"]`,
      );
    }
  }
  if (
    options.negativePrompt !== undefined &&
    !['append', 'drop'].includes(String(options.negativePrompt))
  ) {
    problems.push('engineOptions.negativePrompt must be "append" or "drop"');
  }
  if (options.quality !== undefined && typeof options.quality !== 'string') {
    problems.push('engineOptions.quality must be a string such as "high"');
  }
  // Generations take a prompt only: element pictures would be charged for and ignored.
  if (model.kind === 'image' && model.capabilities.maxElements > 0) {
    problems.push(`${name} takes no element pictures: set capabilities.maxElements to 0`);
  }
  return problems;
}
