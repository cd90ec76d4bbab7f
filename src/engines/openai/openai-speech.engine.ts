import { serverVoiceName, voiceOptionProblems } from '../../domain/configured-voices.ts';
import type { AudioFormat, ModelDefinition } from '../../domain/model.ts';
import { type Engine, type EngineResult, wrongKind } from '../engine.ts';
import { readBody } from '../remote/read-body.ts';
import { backendName, type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';
import { openaiCall } from './openai-call.ts';
import {
  commonOptionProblems,
  probeOpenAi,
  readOptions,
  requestHeaders,
} from './openai-options.ts';
import { postUntilFinished } from './post-until-finished.ts';

const name = 'openai-speech';

/** OpenAI's `response_format` for each of Atelier's audio formats (Opus in Ogg is `opus`). */
const responseFormats = { mp3: 'mp3', wav: 'wav', ogg: 'opus' } as const;
const files = {
  mp3: { mimeType: 'audio/mpeg', extension: 'mp3' },
  wav: { mimeType: 'audio/wav', extension: 'wav' },
  ogg: { mimeType: 'audio/ogg', extension: 'ogg' },
} as const;

/** The speed range of the API (openai-media.md): a model may offer less, not more. */
const apiSpeed = { min: 0.25, max: 4 };

/**
 * `openai-speech`: `POST {baseUrl}/audio/speech` of OpenAI and the servers that copy it
 * (Kokoro-FastAPI, Speaches, LocalAI, Atelier's own `/v1`). Sent: model, input (the text),
 * voice (the configured voice's server name), response_format, speed, and `instructions` when
 * the model's options give some. The audio that comes back is checked: the asked container,
 * and ffprobe finds audio with a duration.
 */
export function openaiSpeechEngine(deps: RemoteDeps): Engine {
  return {
    name,
    kinds: ['speech'],
    probe: (options, signal) => probeOpenAi(deps, name, options, signal),
    checkOptions: (model) => speechOptionProblems(model),
    async run(request, { signal, reportProgress }): Promise<EngineResult> {
      if (request.kind !== 'speech') return wrongKind(name, request.kind);
      const o = readOptions(request.options);
      const call = openaiCall(deps, name, o, 'unusable audio');
      const { settings } = request;
      const instructions = request.options.instructions;
      try {
        const answer = await postUntilFinished(deps, {
          backend: backendName(name, o.baseUrl),
          url: `${o.baseUrl}/audio/speech`,
          init: {
            method: 'POST',
            headers: {
              ...requestHeaders(deps, o, request.taskId),
              accept: 'application/octet-stream',
            },
            body: JSON.stringify({
              model: o.model,
              input: settings.text,
              voice: voiceParam(request.options, request.voice),
              response_format: responseFormats[settings.format],
              speed: settings.speed,
              ...(typeof instructions === 'string' ? { instructions } : {}),
            }),
          },
          signal,
          maxAttempts: o.maxAttempts,
        });
        if (!answer.ok) return call.refused(answer);
        const { response } = answer;
        const bytes = await readBody(response, o.maxOutputBytes);
        if (!isContainer(bytes, settings.format)) {
          throw new RemoteOutputError(`the audio is not ${settings.format}`);
        }
        const probed = await deps.probe.media(bytes, signal);
        if (!probed.hasAudio || probed.durationMs === null || probed.durationMs <= 0) {
          throw new RemoteOutputError('the file holds no audio with a duration');
        }
        reportProgress(1);
        return {
          ok: true,
          outputs: [
            { kind: 'audio', ...files[settings.format], bytes, durationMs: probed.durationMs },
          ],
        };
      } catch (error) {
        signal.throwIfAborted();
        return call.failed(error);
      }
    },
  };
}

/**
 * `voice` as the API takes it: the voice's name, or `{"id": "voice_…"}` for a voice the model
 * configured as a custom one (OpenAI's custom voices are addressed by id in that shape).
 */
function voiceParam(
  options: Readonly<Record<string, unknown>>,
  voice: string,
): string | { id: string } {
  const voices = Array.isArray(options.voices) ? (options.voices as { voice?: unknown }[]) : [];
  const custom = voices.some(
    (v) => typeof v.voice === 'object' && v.voice !== null && serverVoiceName(v.voice) === voice,
  );
  return custom ? { id: voice } : voice;
}

/** OpenAI's own speech models, whose `input` is at most 4096 characters (openai-media.md). */
const openAiSpeechModel = /^(tts-1|gpt-[\w.-]*tts)/;
const openAiMaxInput = 4096;

/** Whether the bytes start as the container of `format` (what the stored file claims to be). */
export function isContainer(bytes: Buffer, format: AudioFormat): boolean {
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString('latin1');
  switch (format) {
    case 'wav':
      return ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE';
    case 'ogg':
      return ascii(0, 4) === 'OggS';
    case 'mp3':
      // An ID3 tag, or straight into an MPEG audio frame (11 sync bits).
      return ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0);
  }
}

function speechOptionProblems(model: ModelDefinition): string[] {
  const problems = [
    ...commonOptionProblems(model.engineOptions),
    ...voiceOptionProblems(model.engineOptions.voices),
  ];
  const { instructions } = model.engineOptions;
  if (instructions !== undefined && typeof instructions !== 'string') {
    problems.push('engineOptions.instructions must be a string (a speaking style)');
  }
  if (model.kind !== 'speech') return problems;
  const { pitch, speed } = model.capabilities;
  // The API has no pitch: a model offering one would charge for a change it cannot make.
  if (pitch.min !== 1 || pitch.max !== 1) {
    problems.push(`${name} cannot change pitch: set capabilities.pitch to {"min":1,"max":1}`);
  }
  if (speed.min < apiSpeed.min || speed.max > apiSpeed.max) {
    problems.push(
      `capabilities.speed must lie within ${apiSpeed.min}–${apiSpeed.max} (the API's range)`,
    );
  }
  const providerModel = model.engineOptions.model;
  if (
    typeof providerModel === 'string' &&
    openAiSpeechModel.test(providerModel) &&
    model.capabilities.maxTextLength > openAiMaxInput
  ) {
    problems.push(
      `${providerModel} takes at most ${openAiMaxInput} characters: set capabilities.maxTextLength to ${openAiMaxInput} or less (it is ${model.capabilities.maxTextLength})`,
    );
  }
  return problems;
}
