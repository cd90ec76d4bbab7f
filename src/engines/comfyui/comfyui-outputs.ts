import type { EngineOutput, EngineRequest } from '../engine.ts';
import type { RemoteDeps } from '../remote/remote-deps.ts';
import { RemoteOutputError } from '../remote/remote-deps.ts';
import type { ComfyApi } from './comfyui-api.ts';
import { filesFor, type OutputFile } from './history-entry.ts';

const imageTypes: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

/**
 * The outputs of a finished prompt as the request asked for them, each fetched from `/view`
 * within `maxBytes` and checked before it is stored: images decoded, of the asked size and
 * format; a video probed, with a video stream, in MP4 or WebM. Throws a RemoteOutputError
 * (a failure of the task, code 1) when ComfyUI made something else.
 */
export async function fetchOutputs(
  request: Extract<EngineRequest, { kind: 'image' | 'video' }>,
  files: readonly OutputFile[],
  o: { api: ComfyApi; deps: RemoteDeps; maxBytes: number; signal: AbortSignal },
): Promise<EngineOutput[]> {
  const wanted = filesFor(request.kind, files);
  const count = request.kind === 'image' ? request.settings.count : 1;
  if (wanted.length < count) {
    const what = request.kind === 'image' ? 'image(s)' : 'video';
    throw new RemoteOutputError(
      `ComfyUI's history lists ${wanted.length} ${what} for a request of ${count}: check the workflow's output nodes${request.kind === 'image' ? ' and its {{count}} marker' : ''}.`,
    );
  }
  const outputs: EngineOutput[] = [];
  for (const file of wanted.slice(0, count)) {
    const bytes = await o.api.view(file, o.maxBytes, o.signal);
    outputs.push(
      request.kind === 'image'
        ? await checkImage(bytes, request.settings, o.deps)
        : await checkVideo(bytes, o.deps, o.signal),
    );
  }
  return outputs;
}

async function checkImage(
  bytes: Buffer,
  asked: { width: number; height: number; format: string },
  deps: RemoteDeps,
): Promise<EngineOutput> {
  const image = await deps.probe.image(bytes);
  if (image.format !== asked.format) {
    throw new RemoteOutputError(`ComfyUI returned a ${image.format} image, not ${asked.format}.`);
  }
  if (image.width !== asked.width || image.height !== asked.height) {
    throw new RemoteOutputError(
      `ComfyUI returned a ${image.width}x${image.height} image, not the ${asked.width}x${asked.height} asked: check the workflow's {{width}}/{{height}} markers.`,
    );
  }
  return {
    kind: 'image',
    mimeType: imageTypes[image.format]!,
    extension: image.format === 'jpeg' ? 'jpg' : image.format,
    bytes,
    width: image.width,
    height: image.height,
  };
}

async function checkVideo(bytes: Buffer, deps: RemoteDeps, signal: AbortSignal) {
  const container = videoContainer(bytes);
  if (container === undefined) {
    throw new RemoteOutputError('ComfyUI returned a file that is neither MP4 nor WebM video.');
  }
  const media = await deps.probe.media(bytes, signal);
  if (!media.hasVideo) throw new RemoteOutputError('ComfyUI returned a video without a picture.');
  return {
    kind: 'video',
    mimeType: `video/${container}`,
    extension: container,
    bytes,
    ...(media.durationMs === null ? {} : { durationMs: media.durationMs }),
  } satisfies EngineOutput;
}

/** MP4 (an `ftyp` box first) or WebM (an EBML header), by their first bytes. */
function videoContainer(bytes: Buffer): 'mp4' | 'webm' | undefined {
  if (bytes.length >= 12 && bytes.toString('latin1', 4, 8) === 'ftyp') return 'mp4';
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  return undefined;
}
