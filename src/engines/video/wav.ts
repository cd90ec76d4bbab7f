/**
 * Cutting a PCM WAV to a length without decoding it: the `data` chunk is shortened to whole
 * sample frames and the RIFF and data sizes rewritten. Other chunks are kept as they are.
 */

/** The sample rate and sample frame size a WAV's `fmt ` chunk declares. */
export interface WavLayout {
  readonly sampleRate: number;
  /** Bytes per sample frame (all channels). */
  readonly blockAlign: number;
  /** Where the `data` chunk's bytes start and how many there are. */
  readonly dataStart: number;
  readonly dataLength: number;
}

/** Reads the layout of a RIFF/WAVE file; throws a RangeError on anything else. */
export function readWavLayout(wav: Buffer): WavLayout {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF') {
    throw new RangeError('audio is not a RIFF WAV');
  }
  if (wav.toString('latin1', 8, 12) !== 'WAVE') throw new RangeError('audio is not a WAVE file');
  let sampleRate = 0;
  let blockAlign = 0;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ' && body + 16 <= wav.length) {
      sampleRate = wav.readUInt32LE(body + 4);
      blockAlign = wav.readUInt16LE(body + 12);
    } else if (id === 'data') {
      if (sampleRate === 0 || blockAlign === 0) break;
      // A streamed WAV may declare 0xFFFFFFFF: the data then runs to the end of the file.
      const available = Math.min(size, wav.length - body);
      return {
        sampleRate,
        blockAlign,
        dataStart: body,
        dataLength: available - (available % blockAlign),
      };
    }
    at = body + size + (size % 2); // chunks are padded to even sizes
  }
  throw new RangeError('audio WAV has no usable fmt and data chunks');
}

/**
 * The WAV cut to fewer than `seconds × sampleRate` sample frames (unchanged when it is
 * already shorter).
 *
 * Strictly fewer, so the audio always runs out before the video ends: ffmpeg then pads it
 * with silence and reads its input to the end, rather than stopping mid-file when the output
 * is long enough and leaving unread bytes in the pipe.
 */
export function cutWavBelow(wav: Buffer, seconds: number): Buffer {
  const layout = readWavLayout(wav);
  const frames = layout.dataLength / layout.blockAlign;
  const keep = Math.max(0, Math.min(frames, Math.ceil(seconds * layout.sampleRate) - 1));
  if (keep === frames && layout.dataStart + layout.dataLength === wav.length) return wav;
  const length = keep * layout.blockAlign;
  const cut = Buffer.from(wav.subarray(0, layout.dataStart + length));
  cut.writeUInt32LE(cut.length - 8, 4);
  cut.writeUInt32LE(length, layout.dataStart - 4);
  return cut;
}
