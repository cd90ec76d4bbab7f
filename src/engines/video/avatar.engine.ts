import { FinishCode } from '../../domain/finish-code.ts';
import type { Engine, EngineContext, EngineRequest, EngineResult } from '../engine.ts';
import { wrongKind } from '../engine.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import { decodeAudio, encodeWav } from '../speech/audio.ts';
import { synthesize } from '../speech/espeak.ts';
import { mouthFromLoudness, mouthFromPhonemes } from '../speech/mouth.ts';
import { renderAvatarVideo } from './avatar-video.ts';

const decodeRate = 22_050;

/**
 * The talking portrait: the script is spoken by eSpeak NG and the mouth follows its phoneme
 * timings; an uploaded audio is decoded and the mouth follows its loudness. The video lasts
 * exactly as long as the speech.
 */
export function talkingPortraitEngine(ffmpeg: Ffmpeg): Engine {
  return {
    name: 'talking-portrait',
    kinds: ['avatar'],
    async run(request: EngineRequest, context: EngineContext): Promise<EngineResult> {
      if (request.kind !== 'avatar') return wrongKind(this.name, request.kind);
      const { settings } = request;
      const { signal } = context;
      let samples: Int16Array;
      let sampleRate: number;
      let mouth: (frames: number) => Float32Array;
      if (settings.script !== null && request.voice !== null) {
        const speech = await synthesize(
          { text: settings.script, voice: request.voice, speed: 1, pitch: 1 },
          signal,
        );
        ({ samples, sampleRate } = speech);
        mouth = (frames) => mouthFromPhonemes(speech.phonemes, frames, settings.fps);
      } else if (request.audio !== null) {
        ({ samples, sampleRate } = await decodeAudio(ffmpeg, request.audio, decodeRate, signal));
        mouth = (frames) => mouthFromLoudness(samples, sampleRate, frames, settings.fps);
      } else {
        return {
          ok: false,
          finishCode: FinishCode.RejectedInput,
          message: 'Neither a script nor an audio was given.',
        };
      }
      const frames = Math.max(1, Math.ceil((samples.length / sampleRate) * settings.fps));
      context.reportProgress(0.1);
      const bytes = await renderAvatarVideo(
        ffmpeg,
        {
          portrait: request.portrait,
          width: settings.width,
          height: settings.height,
          fps: settings.fps,
          mouth: mouth(frames),
          audioWav: encodeWav(samples, sampleRate),
        },
        { signal, reportProgress: (p) => context.reportProgress(0.1 + 0.9 * p) },
      );
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
            durationMs: Math.round((frames / settings.fps) * 1000),
          },
        ],
      };
    },
  };
}
