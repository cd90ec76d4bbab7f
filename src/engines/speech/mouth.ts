import type { PhonemeTiming } from './espeak.ts';

/**
 * How far the jaw drops for an IPA vowel, by vowel height: open vowels (the "a" of "father")
 * widest, close vowels ("ee", "oo") least, but every vowel more than any consonant.
 */
const vowelOpenness: Readonly<Record<string, number>> = Object.fromEntries([
  ...[...'aɑæɐɒɶä'].map((v) => [v, 1] as const),
  ...[...'ɛɔʌœɜɞɝ'].map((v) => [v, 0.85] as const),
  ...[...'eoøəɘɵɤɚ'].map((v) => [v, 0.7] as const),
  ...[...'iuyɪʊʏɨʉɯɿ'].map((v) => [v, 0.55] as const),
]);
/** Lips pressed together. */
const bilabials = new Set([...'mbpɸβʙ']);
/** Lower lip against the teeth: nearly closed. */
const labiodentals = new Set([...'fvɱʋ']);
const consonantOpenness = 0.25;
const labiodentalOpenness = 0.1;

/** IPA stress and length marks and combining diacritics; they do not move the jaw. */
const modifiers = /[ˈˌːˑ\p{M}]/gu;

/** Openness of one eSpeak phoneme (IPA): its first vowel if it has one, else its first sound. */
export function phonemeOpenness(phoneme: string): number {
  const sounds = [...phoneme.replace(modifiers, '')];
  for (const sound of sounds) {
    const vowel = vowelOpenness[sound];
    if (vowel !== undefined) return vowel;
  }
  const first = sounds[0];
  if (first === undefined) return 0;
  if (bilabials.has(first)) return 0;
  if (labiodentals.has(first)) return labiodentalOpenness;
  return consonantOpenness;
}

/**
 * Openness 0 (closed) .. 1 (wide open) for each frame of a video of `frameCount` frames at
 * `fps`. Each frame takes the time-weighted openness of the phonemes it overlaps (time with no
 * phoneme, a pause, counts as closed), then a light [¼ ½ ¼] blur so the mouth does not flicker
 * at phoneme boundaries that fall between frames.
 */
export function mouthFromPhonemes(
  phonemes: readonly PhonemeTiming[],
  frameCount: number,
  fps: number,
): Float32Array {
  const frameMs = 1000 / fps;
  const frames = new Float32Array(frameCount);
  for (const { phoneme, startMs, endMs } of phonemes) {
    const openness = phonemeOpenness(phoneme);
    if (openness === 0 || endMs <= startMs) continue;
    const first = Math.max(0, Math.floor(startMs / frameMs));
    const last = Math.min(frameCount - 1, Math.floor(endMs / frameMs));
    for (let frame = first; frame <= last; frame++) {
      const overlap = Math.min(endMs, (frame + 1) * frameMs) - Math.max(startMs, frame * frameMs);
      if (overlap > 0) frames[frame]! += (openness * overlap) / frameMs;
    }
  }
  return clampUnit(smooth(frames));
}

/** Frames quieter than this share of the clip's loud level count as closed. */
const relativeFloor = 0.1;
/** Below this RMS (about −60 dBFS) a frame is silent, however quiet the whole clip is. */
const absoluteFloor = 32768 * 0.001;
/** The clip's "loud" level: a high percentile, so one click does not set the scale. */
const loudPercentile = 0.95;

/**
 * Openness per frame from loudness, for audio without phoneme timings (an uploaded voice):
 * RMS of each frame's samples relative to the clip's loud level, with quiet frames closed.
 */
export function mouthFromLoudness(
  samples: Int16Array,
  sampleRate: number,
  frameCount: number,
  fps: number,
): Float32Array {
  const rms = new Float32Array(frameCount);
  for (let frame = 0; frame < frameCount; frame++) {
    const start = Math.floor((frame * sampleRate) / fps);
    const end = Math.min(samples.length, Math.floor(((frame + 1) * sampleRate) / fps));
    let sum = 0;
    for (let i = start; i < end; i++) sum += samples[i]! * samples[i]!;
    rms[frame] = end > start ? Math.sqrt(sum / (end - start)) : 0;
  }
  const audible = rms.filter((value) => value >= absoluteFloor).sort();
  const loud = audible[Math.min(audible.length - 1, Math.floor(audible.length * loudPercentile))];
  const frames = new Float32Array(frameCount);
  if (loud === undefined) return frames;
  for (const [frame, value] of rms.entries()) {
    if (value < absoluteFloor) continue;
    frames[frame] = (value / loud - relativeFloor) / (1 - relativeFloor);
  }
  return clampUnit(frames);
}

function smooth(values: Float32Array): Float32Array {
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const here = values[i]!;
    out[i] = 0.25 * (values[i - 1] ?? here) + 0.5 * here + 0.25 * (values[i + 1] ?? here);
  }
  return out;
}

function clampUnit(values: Float32Array): Float32Array {
  for (let i = 0; i < values.length; i++) values[i] = Math.min(1, Math.max(0, values[i]!));
  return values;
}
