import type { AudioFormat } from '../../domain/model.ts';
import { sharp } from '../../shared/sharp.ts';
import type { EngineOutput, EngineRequest, EngineResult } from '../engine.ts';
import { type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';
import { failure } from './replicate-failure.ts';
import type { ReplicateOptions } from './replicate-options.ts';
import type { Prediction } from './replicate-prediction.ts';

// A succeeded prediction's `output` is model-defined (protocol doc, "Output forms"): a URL, a
// list of URLs, or an object of them. Each file is fetched through the kit's output fetch (the
// API's own origin or a public https host such as replicate.delivery, size-capped, with a
// deadline) and checked before it is stored: images decoded, audio and video probed.

/** The output file URLs, in order; `outputKey` picks one from an object. */
export function outputUrls(output: unknown, outputKey: string | null): string[] {
  if (typeof output === 'string') return [output];
  if (Array.isArray(output)) return output.filter((item) => typeof item === 'string');
  if (typeof output === 'object' && output !== null) {
    const record = output as Record<string, unknown>;
    const values = outputKey === null ? Object.values(record) : [record[outputKey]];
    return values.filter(
      (item): item is string => typeof item === 'string' && /^https?:/.test(item),
    );
  }
  return [];
}

/** Fetches and checks the outputs the request asked for. */
export async function collectOutputs(
  deps: RemoteDeps,
  options: ReplicateOptions,
  token: string,
  request: EngineRequest,
  prediction: Prediction,
  signal: AbortSignal,
): Promise<EngineResult> {
  if (prediction.dataRemoved) {
    return failure(
      'unusable',
      `Replicate had already deleted the output of prediction ${prediction.id} (it keeps outputs for an hour)`,
    );
  }
  const urls = outputUrls(prediction.output, options.outputKey);
  const wanted = request.kind === 'image' ? request.settings.count : 1;
  if (urls.length < wanted) {
    return failure(
      'unusable',
      urls.length === 0
        ? `Replicate's prediction ${prediction.id} succeeded without an output file (a safety filter may have removed every result)`
        : `Replicate's prediction ${prediction.id} returned ${urls.length} files, not ${wanted}`,
    );
  }
  const deadline = AbortSignal.timeout(options.outputTimeoutMs);
  const download = AbortSignal.any([signal, deadline]);
  const outputs: EngineOutput[] = [];
  try {
    for (const url of urls.slice(0, wanted)) {
      const { bytes, contentType } = await deps.fetchOutput(url, {
        providerOrigin: new URL(options.baseUrl).origin,
        // Files on the API's own origin are its token's (Replicate's API document).
        providerAuthorization: `Bearer ${token}`,
        maxBytes: options.maxOutputBytes,
        signal: download,
        timeoutMs: options.outputTimeoutMs, // up to an hour; the kit's own default is shorter
      });
      outputs.push(await checkOutput(deps, request, bytes, typeOf(url, contentType), signal));
    }
  } catch (error) {
    signal.throwIfAborted();
    if (deadline.aborted) {
      return failure(
        'unusable',
        `An output of Replicate was not downloaded within ${options.outputTimeoutMs} ms`,
      );
    }
    if (error instanceof RemoteOutputError)
      return failure('unusable', `Replicate's output: ${error.message}`);
    throw error;
  }
  return { ok: true, outputs };
}

async function checkOutput(
  deps: RemoteDeps,
  request: EngineRequest,
  bytes: Buffer,
  type: { mime: string | null; extension: string | null },
  signal: AbortSignal,
): Promise<EngineOutput> {
  if (request.kind === 'image') {
    const image = await deps.probe.image(bytes);
    const format = request.settings.format;
    // The user asked for a format; a model that answers in another is converted, not passed on.
    const same = image.format === format || (image.format === 'jpg' && format === 'jpeg');
    const converted = same ? bytes : await sharp(bytes).toFormat(format).toBuffer();
    const mimeType = `image/${format}`;
    const extension = format === 'jpeg' ? 'jpg' : format;
    return {
      kind: 'image',
      mimeType,
      extension,
      bytes: converted,
      width: image.width,
      height: image.height,
    };
  }
  const probed = await deps.probe.media(bytes, signal);
  const durationMs = probed.durationMs ?? undefined;
  if (request.kind === 'speech') {
    if (!probed.hasAudio) throw new RemoteOutputError('the speech output has no audio');
    // The bytes say what they are, not the URL or Content-Type (which could be text/html): a
    // user who asked for one format gets that format or a failure, never another.
    const made = audioFormatOf(bytes);
    if (made === null) throw new RemoteOutputError('the speech output is not WAV, MP3 or Ogg');
    const asked = request.settings.format;
    if (made !== asked) {
      throw new RemoteOutputError(
        `the model made ${made} audio, not the ${asked} asked for (its input template should pass {{format}})`,
      );
    }
    const mimeType = audioTypes[made];
    return {
      kind: 'audio',
      mimeType,
      extension: made,
      bytes,
      ...(durationMs ? { durationMs } : {}),
    };
  }
  if (!probed.hasVideo) throw new RemoteOutputError(`the ${request.kind} output has no video`);
  if (request.kind === 'avatar' && !probed.hasAudio) {
    throw new RemoteOutputError('the avatar video has no sound');
  }
  const extension = type.extension === 'webm' || type.extension === 'mov' ? type.extension : 'mp4';
  const mimeType = { mp4: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime' }[extension];
  return { kind: 'video', mimeType, extension, bytes, ...(durationMs ? { durationMs } : {}) };
}

const audioTypes: Readonly<Record<AudioFormat, string>> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
};

/** The speech format of `bytes` by its signature (RIFF/WAVE, OggS, ID3 or an MP3 frame), or null. */
function audioFormatOf(bytes: Buffer): AudioFormat | null {
  const ascii = (from: number, to: number) => bytes.toString('latin1', from, to);
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  // An MPEG audio frame sync (11 bits set) with a layer; AAC's ADTS has layer bits 00.
  const [first = 0, second = 0] = bytes;
  return first === 0xff && (second & 0xe0) === 0xe0 && (second & 0x06) !== 0 ? 'mp3' : null;
}

/** The file's extension (from its URL) and media type (from the answer's Content-Type). */
function typeOf(
  url: string,
  contentType: string | null,
): { mime: string | null; extension: string | null } {
  const extension = /\.([a-z0-9]{2,5})$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? null;
  const mime = contentType?.split(';')[0]?.trim().toLowerCase() ?? null;
  const generic = mime === null || mime === 'application/octet-stream';
  return { mime: generic ? null : mime, extension };
}
