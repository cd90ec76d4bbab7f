import { endianness } from 'node:os';
import type { AudioFormat } from '../../domain/model.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';

export type { AudioFormat };

export interface EncodedAudio {
  readonly bytes: Buffer;
  readonly mimeType: string;
  readonly extension: string;
  /** Of the samples given, not of the encoder's padding. */
  readonly durationMs: number;
}

export interface DecodedAudio {
  readonly samples: Int16Array;
  readonly sampleRate: number;
}

const wavHeaderBytes = 44;
const littleEndianHost = endianness() === 'LE';

/** A canonical 44-byte RIFF/WAVE header and 16-bit mono PCM; no encoder needed. */
export function encodeWav(samples: Int16Array, sampleRate: number): Buffer {
  const dataBytes = samples.length * 2;
  const wav = Buffer.alloc(wavHeaderBytes + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size for PCM
  wav.writeUInt16LE(1, 20); // format 1: integer PCM
  wav.writeUInt16LE(1, 22); // channels
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // bytes per second
  wav.writeUInt16LE(2, 32); // bytes per frame
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  pcmBytes(samples).copy(wav, wavHeaderBytes);
  return wav;
}

const encoders = {
  // Constant bit rate: written to a pipe, ffmpeg cannot go back to fill in a VBR (Xing) header,
  // and without one players would guess the duration of a VBR file wrongly.
  mp3: {
    mimeType: 'audio/mpeg',
    args: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'],
  },
  // libopus only takes 8, 12, 16, 24 or 48 kHz; eSpeak speaks at 22.05 kHz.
  ogg: {
    mimeType: 'audio/ogg',
    args: ['-c:a', 'libopus', '-b:a', '32k', '-ar', '48000', '-f', 'ogg'],
  },
} as const;

/** Encodes mono 16-bit PCM as WAV (by hand) or, through ffmpeg, MP3 or Ogg Opus. */
export async function encodeAudio(
  ffmpeg: Ffmpeg,
  samples: Int16Array,
  sampleRate: number,
  format: AudioFormat,
  signal: AbortSignal,
): Promise<EncodedAudio> {
  const durationMs = (samples.length / sampleRate) * 1000;
  if (format === 'wav') {
    signal.throwIfAborted();
    return {
      bytes: encodeWav(samples, sampleRate),
      mimeType: 'audio/wav',
      extension: 'wav',
      durationMs,
    };
  }
  const encoder = encoders[format];
  const bytes = await ffmpeg.run({
    args: [
      ...['-f', 's16le', '-ar', String(sampleRate), '-ac', '1', '-i', 'pipe:0'],
      ...encoder.args,
      'pipe:1',
    ],
    stdin: pcmBytes(samples),
    signal,
  });
  return { bytes, mimeType: encoder.mimeType, extension: format, durationMs };
}

/** Decodes anything ffmpeg reads (first audio stream) to mono 16-bit PCM at `sampleRate`. */
export async function decodeAudio(
  ffmpeg: Ffmpeg,
  bytes: Buffer,
  sampleRate: number,
  signal: AbortSignal,
): Promise<DecodedAudio> {
  const pcm = await ffmpeg.run({
    args: ['-i', 'pipe:0', '-vn', '-ac', '1', '-ar', String(sampleRate), '-f', 's16le', 'pipe:1'],
    stdin: bytes,
    signal,
  });
  return { samples: pcmSamples(pcm), sampleRate };
}

/**
 * How long an audio lasts, by decoding all of it (to 8 kHz mono: cheap): containers read from
 * a pipe often do not state their duration, and a full decode proves the bytes are readable.
 */
export async function measureAudio(
  ffmpeg: Ffmpeg,
  bytes: Buffer,
  signal: AbortSignal,
): Promise<number> {
  const rate = 8000;
  const { samples } = await decodeAudio(ffmpeg, bytes, rate, signal);
  return Math.round((samples.length / rate) * 1000);
}

/** `samples` as little-endian bytes: a view of them on little-endian hosts, else a copy. */
function pcmBytes(samples: Int16Array): Buffer {
  if (littleEndianHost) {
    return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  }
  const bytes = Buffer.alloc(samples.length * 2);
  for (const [index, sample] of samples.entries()) bytes.writeInt16LE(sample, index * 2);
  return bytes;
}

/** Samples from little-endian bytes; copies, since a Buffer may sit at an odd pool offset. */
function pcmSamples(bytes: Buffer): Int16Array {
  const samples = new Int16Array(Math.floor(bytes.length / 2));
  if (littleEndianHost) {
    new Uint8Array(samples.buffer).set(bytes.subarray(0, samples.length * 2));
    return samples;
  }
  for (let index = 0; index < samples.length; index++)
    samples[index] = bytes.readInt16LE(index * 2);
  return samples;
}
