import type { Engine, EngineContext, EngineRequest, EngineResult } from '../engine.ts';
import { wrongKind } from '../engine.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import { renderImageToVideo } from './image-to-video.ts';
import { renderTextToVideo } from './text-to-video.ts';

/**
 * The built-in video engine: text-to-video (an animated procedural scene) or image-to-video
 * (camera motion over the still), frames streamed to ffmpeg and encoded to H.264 MP4.
 */
export function proceduralVideoEngine(ffmpeg: Ffmpeg): Engine {
  return {
    name: 'procedural-video',
    kinds: ['video'],
    async run(request: EngineRequest, context: EngineContext): Promise<EngineResult> {
      if (request.kind !== 'video') return wrongKind(this.name, request.kind);
      const { settings } = request;
      const job = {
        prompt: settings.prompt,
        seed: settings.seed,
        width: settings.width,
        height: settings.height,
        fps: settings.fps,
        durationSeconds: settings.durationSeconds,
        elements: request.elements.map((e) => e.picture),
      };
      const bytes =
        request.image === null
          ? await renderTextToVideo(ffmpeg, job, context)
          : await renderImageToVideo(ffmpeg, { ...job, image: request.image }, context);
      return {
        ok: true,
        outputs: [
          {
            kind: 'video',
            mimeType: 'video/mp4',
            extension: 'mp4',
            bytes,
            width: settings.width,
            height: settings.height,
            durationMs: settings.durationSeconds * 1000,
          },
        ],
      };
    },
  };
}
