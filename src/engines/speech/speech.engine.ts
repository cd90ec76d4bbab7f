import type { Engine, EngineContext, EngineRequest, EngineResult } from '../engine.ts';
import { wrongKind } from '../engine.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import { encodeAudio } from './audio.ts';
import { synthesize } from './espeak.ts';

/**
 * The built-in speech engine: eSpeak NG (WASM, in a worker process) speaks the text; ffmpeg
 * encodes it to the requested format through pipes.
 */
export function speechEngine(ffmpeg: Ffmpeg): Engine {
  return {
    name: 'espeak',
    kinds: ['speech'],
    async run(request: EngineRequest, context: EngineContext): Promise<EngineResult> {
      if (request.kind !== 'speech') return wrongKind(this.name, request.kind);
      const { settings } = request;
      const speech = await synthesize(
        { text: settings.text, voice: request.voice, speed: settings.speed, pitch: settings.pitch },
        context.signal,
      );
      context.reportProgress(0.8);
      const audio = await encodeAudio(
        ffmpeg,
        speech.samples,
        speech.sampleRate,
        settings.format,
        context.signal,
      );
      context.reportProgress(1);
      return {
        ok: true,
        outputs: [
          {
            kind: 'audio',
            mimeType: audio.mimeType,
            extension: audio.extension,
            bytes: audio.bytes,
            durationMs: audio.durationMs,
          },
        ],
      };
    },
  };
}
