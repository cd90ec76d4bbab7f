import type {
  Engine,
  EngineContext,
  EngineOutput,
  EngineRequest,
  EngineResult,
} from '../engine.ts';
import { wrongKind } from '../engine.ts';
import { renderImage } from './render.ts';

const mimeTypes = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;
const extensions = { png: 'png', jpeg: 'jpg', webp: 'webp' } as const;

/**
 * The built-in image engine. Rendering (SVG rasterisation, compositing, encoding) happens in
 * libvips on sharp's own thread pool, so it never blocks the event loop that serves HTTP.
 */
export const proceduralImageEngine: Engine = {
  name: 'procedural-image',
  kinds: ['image'],
  async run(request: EngineRequest, context: EngineContext): Promise<EngineResult> {
    if (request.kind !== 'image') return wrongKind(this.name, request.kind);
    const { settings } = request;
    const outputs: EngineOutput[] = [];
    for (let index = 0; index < settings.count; index++) {
      context.signal.throwIfAborted();
      const bytes = await renderImage(request, index);
      outputs.push({
        kind: 'image',
        mimeType: mimeTypes[settings.format],
        extension: extensions[settings.format],
        bytes,
        width: settings.width,
        height: settings.height,
      });
      context.reportProgress((index + 1) / settings.count);
    }
    return { ok: true, outputs };
  },
};
