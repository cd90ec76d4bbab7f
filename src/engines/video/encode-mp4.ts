import { setImmediate } from 'node:timers/promises';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import type { RenderContext } from './video-job.ts';
import { cutWavBelow } from './wav.ts';

/** AAC at the rate every player takes. */
const audioRate = 48_000;

/** Raw RGB frames (and optionally a soundtrack) to encode as one MP4. */
export interface Mp4Input {
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  /**
   * Exactly `frameCount` frames of `width × height × 3` bytes (rgb24), made as they are read.
   * The next frame is asked for once the last is written to ffmpeg: every frame may be drawn
   * into the same buffer.
   */
  readonly frames: AsyncIterable<Buffer>;
  readonly frameCount: number;
  /** WAV bytes; padded with silence or cut so the audio is exactly as long as the video. */
  readonly audioWav?: Buffer;
}

/**
 * Encodes frames streamed through stdin as H.264 (plus AAC audio) in a fragmented MP4 written
 * to stdout: a plain MP4 needs a seekable output for its index, a pipe is not one.
 * Nothing touches the disk. Progress follows ffmpeg's own output clock.
 */
export async function encodeMp4(
  ffmpeg: Ffmpeg,
  input: Mp4Input,
  context: RenderContext,
): Promise<Buffer> {
  const seconds = input.frameCount / input.fps;
  const fps = String(input.fps);
  const audio = input.audioWav !== undefined;
  const args = [
    ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${input.width}x${input.height}`],
    ...['-framerate', fps, '-i', 'pipe:0'],
    ...(audio ? ['-f', 'wav', '-i', 'pipe:3', '-map', '0:v', '-map', '1:a'] : []),
    // BT.709 for every size, tagged, so players do not guess (they guess 601 below 720p).
    ...['-vf', 'scale=out_color_matrix=bt709:out_range=tv,format=yuv420p'],
    ...['-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709'],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p'],
    // No B-frames: their reordering delay starts the video track 2 frames late in a
    // fragmented MP4 (no edit list can shift it there), out of sync with the audio.
    ...['-bf', '0', '-g', String(Math.max(1, Math.round(input.fps * 2))), '-r', fps],
    // No `-frames:v`: reaching it closes every stream of the output, the audio mid-way. The
    // frame source yields exactly `frameCount` frames instead.
    ...(audio ? audioArgs(seconds) : []),
    // One fragment for the whole video: ffprobe reading from a pipe (as `Ffmpeg.probe` does)
    // stops after the first fragment and reports its length. Without a fragment duration
    // ffmpeg cuts one at every keyframe; the option is int32 µs, so about 35 minutes at most.
    ...['-movflags', 'empty_moov+default_base_moof', '-frag_duration', String(2 ** 31 - 1)],
    // The edit list hides the AAC encoder's priming samples; without it ffmpeg shifts the
    // video track by them instead (5 s at 24 fps then probes as 5.021 s at 23.9 fps).
    ...['-use_editlist', '1'],
    // No encoder version or creation time in the file: the same frames give the same bytes.
    ...['-fflags', '+bitexact', '-f', 'mp4', 'pipe:1'],
  ];
  const progress = monotonicProgress(context);
  const bytes = await ffmpeg.run({
    args,
    stdin: input.frames,
    extraInputs: audio ? [cutWavBelow(input.audioWav!, seconds)] : [],
    signal: context.signal,
    // Capped below 1: the output is only complete once ffmpeg has exited.
    onProgress: (outputSeconds) => progress(Math.min(0.99, outputSeconds / seconds)),
  });
  progress(1);
  return bytes;
}

/**
 * The soundtrack, made as long as the video: the WAV arrives cut shorter than the video (see
 * `cutWavBelow`), `apad` fills it with silence to the video's last sample, and `-t` is a
 * backstop. The AAC stream still ends on a whole 1024-sample packet, up to 21 ms later.
 */
function audioArgs(seconds: number): string[] {
  const samples = Math.round(seconds * audioRate);
  return [
    ...['-af', `aresample=${audioRate},apad=whole_len=${samples}`],
    ...['-c:a', 'aac', '-b:a', '128k', '-t', seconds.toFixed(6)],
  ];
}

/** Reports only values above the last one, so progress never goes back. */
function monotonicProgress(context: RenderContext): (value: number) => void {
  let last = -1;
  return (value) => {
    if (!(value > last)) return;
    last = value;
    context.reportProgress(value);
  };
}

/**
 * Waits for the event loop's next turn, then throws if the render was aborted. Frame sources
 * await it before each frame: when ffmpeg reads as fast as frames come, a pipe write completes
 * without waiting for I/O and the next frame would be drawn at once, so a run of frames would
 * hold the event loop for a hundred milliseconds or more.
 */
export async function nextTurn(signal: AbortSignal): Promise<void> {
  await setImmediate();
  signal.throwIfAborted();
}
