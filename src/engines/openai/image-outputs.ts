import type { ImageSettings } from '../../domain/kinds/image.kind.ts';
import type { EngineOutput } from '../engine.ts';
import { type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';

const mimeTypes = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;
const extensions = { png: 'png', jpeg: 'jpg', webp: 'webp' } as const;

/** One item of an `ImagesResponse.data`: the image inline (`b64_json`) or linked (`url`). */
interface ImageItem {
  readonly b64_json?: unknown;
  readonly url?: unknown;
}

/**
 * The images of an `ImagesResponse`, each fetched (a `url` through the careful output fetch),
 * decoded and checked against what was asked: as many as asked, of the asked size and format.
 * Throws a {@link RemoteOutputError} naming what the provider got wrong.
 */
export async function imageOutputs(
  body: unknown,
  settings: ImageSettings,
  deps: RemoteDeps,
  fetch: { providerOrigin: string; maxBytes: number; signal: AbortSignal },
): Promise<EngineOutput[]> {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new RemoteOutputError('the answer has no "data" list of images');
  if (data.length < settings.count) {
    throw new RemoteOutputError(
      `${data.length} image(s) came back, ${settings.count} were asked for`,
    );
  }
  const outputs: EngineOutput[] = [];
  for (const [index, item] of (data as ImageItem[]).slice(0, settings.count).entries()) {
    const bytes = await imageBytes(item, index, deps, fetch);
    const image = await deps.probe.image(bytes);
    if (image.format !== settings.format) {
      throw new RemoteOutputError(
        `image ${index + 1} is ${image.format}, ${settings.format} was asked for`,
      );
    }
    if (image.width !== settings.width || image.height !== settings.height) {
      throw new RemoteOutputError(
        `image ${index + 1} is ${image.width}x${image.height}, ${settings.width}x${settings.height} was asked for`,
      );
    }
    outputs.push({
      kind: 'image',
      mimeType: mimeTypes[settings.format],
      extension: extensions[settings.format],
      bytes,
      width: image.width,
      height: image.height,
    });
  }
  return outputs;
}

async function imageBytes(
  item: ImageItem,
  index: number,
  deps: RemoteDeps,
  fetch: { providerOrigin: string; maxBytes: number; signal: AbortSignal },
): Promise<Buffer> {
  if (typeof item?.b64_json === 'string') {
    // Base64 is 4/3 of the bytes: refuse an oversized image before decoding it.
    if ((item.b64_json.length * 3) / 4 > fetch.maxBytes) {
      throw new RemoteOutputError(`image ${index + 1} is larger than ${fetch.maxBytes} bytes`);
    }
    return Buffer.from(item.b64_json, 'base64');
  }
  if (typeof item?.url === 'string') return (await deps.fetchOutput(item.url, fetch)).bytes;
  throw new RemoteOutputError(`image ${index + 1} has neither "b64_json" nor "url"`);
}
