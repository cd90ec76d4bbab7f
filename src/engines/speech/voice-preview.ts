import type { Ffmpeg } from '../media/ffmpeg.ts';
import { encodeAudio } from './audio.ts';
import { synthesize } from './espeak.ts';

/** A few seconds of a voice saying its own name, as MP3: what a voice's preview downloads. */
export async function renderVoicePreview(
  ffmpeg: Ffmpeg,
  voice: { readonly name: string; readonly engineVoice: string },
): Promise<Buffer> {
  const signal = AbortSignal.timeout(30_000);
  const speech = await synthesize(
    { text: `${voice.name}. 1, 2, 3.`, voice: voice.engineVoice, speed: 1, pitch: 1 },
    signal,
  );
  return (await encodeAudio(ffmpeg, speech.samples, speech.sampleRate, 'mp3', signal)).bytes;
}
