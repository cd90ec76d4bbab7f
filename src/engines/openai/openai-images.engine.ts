import type { ImageSettings } from '../../domain/kinds/image.kind.ts';
import type { ModelDefinition } from '../../domain/model.ts';
import { type Engine, type EngineResult, wrongKind } from '../engine.ts';
import { readBody } from '../remote/read-body.ts';
import { backendName, type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';
import { imageOutputs } from './image-outputs.ts';
import { openaiCall } from './openai-call.ts';
import { commonOptionProblems, readOptions, requestHeaders } from './openai-options.ts';
import { postUntilFinished } from './post-until-finished.ts';

const name = 'openai-images';

/**
 * The most of an images answer read, whatever `n` and `maxOutputBytes` say: the answer is
 * buffered whole, so a cap that grew with `n` (50 MiB × 10 × 4/3) would let one task hold
 * hundreds of MiB.
 */
export const maxAnswerBytes = 200 * 1024 * 1024; // 200 MiB

/**
 * `openai-images`: `POST {baseUrl}/images/generations` of OpenAI and the servers that copy its
 * API (LocalAI, Atelier's own `/v1`…). Sent: model, prompt (the negative prompt appended as
 * "Avoid: …", the API having no field for it, unless `negativePrompt: "drop"`), n, size, and,
 * unless switched off, `response_format` (`responseFormat`, default b64_json; null sends none)
 * and `output_format` (`outputFormat: false` for dall-e), `quality` when set. The seed is not
 * sent: the API takes none.
 */
export function openaiImagesEngine(deps: RemoteDeps): Engine {
  return {
    name,
    kinds: ['image'],
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
  const responseFormat = options.responseFormat === undefined ? 'b64_json' : options.responseFormat;
  return {
    model,
    prompt: `${settings.prompt}${avoid}`,
    n: settings.count,
    size: `${settings.width}x${settings.height}`,
    ...(responseFormat === null ? {} : { response_format: responseFormat }),
    ...(options.outputFormat === false ? {} : { output_format: settings.format }),
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
