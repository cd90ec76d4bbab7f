import type { EspeakEvent } from '@echogarden/espeak-ng-emscripten';
import type { PhonemeTiming } from './espeak.ts';

/**
 * Turns the phoneme events of one eSpeak call into timed phonemes. eSpeak only says when a
 * phoneme starts; it ends where the next phoneme event starts. eSpeak also reports pauses as
 * phoneme events with an empty name, and language switches as `(en)`-style names: both end the
 * phoneme before them and are not phonemes themselves. Times are shifted by `offsetMs` (where
 * this call's audio starts in the whole clip) and kept inside `durationMs` of this call.
 */
export function phonemeTimings(
  events: readonly EspeakEvent[],
  durationMs: number,
  offsetMs: number,
): PhonemeTiming[] {
  const marks = events
    .filter((event) => event.type === 'phoneme')
    .map((event) => ({
      name: typeof event.id === 'string' ? event.id : '',
      at: Math.min(Math.max(event.audio_position, 0), durationMs),
    }));
  const timings: PhonemeTiming[] = [];
  for (const [index, mark] of marks.entries()) {
    if (mark.name === '' || mark.name.startsWith('(')) continue;
    const end = marks[index + 1]?.at ?? durationMs;
    if (end <= mark.at) continue;
    timings.push({ phoneme: mark.name, startMs: offsetMs + mark.at, endMs: offsetMs + end });
  }
  return timings;
}
