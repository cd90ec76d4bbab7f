import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';

/** Where the ffmpeg and ffprobe binaries are. */
export interface FfmpegPaths {
  readonly ffmpeg: string;
  readonly ffprobe: string;
}

/** One ffmpeg invocation. Media goes through pipes only: no temporary files. */
export interface FfmpegRun {
  /** Arguments after the binary. Inputs are `pipe:0`, `pipe:3`, …; the output is `pipe:1`. */
  readonly args: readonly string[];
  /**
   * Written to stdin (`pipe:0`): one buffer, or a stream of them (video frames). A stream's
   * next buffer is asked for only once the last one is written to the pipe, so a source may
   * draw every frame into the same buffer.
   */
  readonly stdin?: Buffer | AsyncIterable<Buffer>;
  /** Further inputs on file descriptors 3, 4, … in order (`pipe:3`, `pipe:4`). */
  readonly extraInputs?: readonly Buffer[];
  /** Kills ffmpeg (SIGKILL) and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Seconds of output written so far, from ffmpeg's `-progress` reports. */
  readonly onProgress?: (outputSeconds: number) => void;
}

/** ffmpeg exited with an error; `stderr` holds the end of what it said. */
export class FfmpegError extends Error {
  readonly stderr: string;
  constructor(message: string, stderr: string) {
    super(message);
    this.name = 'FfmpegError';
    this.stderr = stderr;
  }
}

/** One stream as ffprobe reports it. */
export interface ProbedStream {
  readonly type: 'video' | 'audio' | 'other';
  readonly codec: string;
  readonly width: number | null;
  readonly height: number | null;
  readonly fps: number | null;
  readonly durationMs: number | null;
  readonly sampleRate: number | null;
  readonly channels: number | null;
}

export interface ProbeResult {
  /** ffprobe's `format_name`, e.g. `mov,mp4,m4a,3gp,3g2,mj2` or `wav`. */
  readonly format: string;
  readonly durationMs: number | null;
  readonly streams: readonly ProbedStream[];
}

const stderrKept = 4000;

/**
 * The ffmpeg binaries: `FFMPEG_PATH`/`FFPROBE_PATH` from the configuration, else the ones the
 * `@ffmpeg-installer` and `@ffprobe-installer` packages ship for this platform.
 */
export class Ffmpeg {
  readonly paths: FfmpegPaths;

  constructor(paths: FfmpegPaths) {
    this.paths = paths;
  }

  /** The packaged binaries, unless overridden. */
  static resolve(overrides: { ffmpeg?: string | null; ffprobe?: string | null } = {}): Ffmpeg {
    const require = createRequire(import.meta.url);
    const packaged = (name: string): string => (require(name) as { path: string }).path;
    return new Ffmpeg({
      ffmpeg: overrides.ffmpeg || packaged('@ffmpeg-installer/ffmpeg'),
      ffprobe: overrides.ffprobe || packaged('@ffprobe-installer/ffprobe'),
    });
  }

  /** Runs ffmpeg and resolves with what it wrote to stdout. */
  async run(run: FfmpegRun): Promise<Buffer> {
    const progress = run.onProgress === undefined ? [] : ['-progress', 'pipe:2', '-nostats'];
    const extra = run.extraInputs ?? [];
    const child = spawn(
      this.paths.ffmpeg,
      ['-hide_banner', '-loglevel', 'error', '-nostdin', ...progress, ...run.args],
      {
        stdio: ['pipe', 'pipe', 'pipe', ...extra.map(() => 'pipe' as const)],
        signal: run.signal,
        killSignal: 'SIGKILL',
      },
    );
    const stdout: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      if (run.onProgress !== undefined) {
        for (const match of text.matchAll(/^out_time_us=(\d+)$/gm)) {
          run.onProgress(Number(match[1]) / 1e6);
        }
      }
      stderr = (stderr + text).slice(-stderrKept);
    });

    const exited = new Promise<void>((resolve, reject) => {
      child.once('error', (error) => reject(run.signal?.aborted ? run.signal.reason : error));
      child.once('close', (code, signal) => {
        if (run.signal?.aborted) reject(run.signal.reason);
        else if (code === 0) resolve();
        else {
          const said = meaningfulLines(stderr);
          reject(new FfmpegError(`ffmpeg exited with ${code ?? signal}: ${said}`, said));
        }
      });
    });
    // A write to a pipe ffmpeg closed early (it failed, or needed no more) is not the error
    // to report: the exit status is.
    const feeds = [
      feed(child.stdin!, run.stdin),
      ...extra.map((bytes, i) => feed(child.stdio[3 + i] as Writable, bytes)),
    ];
    await Promise.all([exited, ...feeds.map((f) => f.catch(() => undefined))]);
    return Buffer.concat(stdout);
  }

  /** What ffprobe says about media bytes (read from a pipe, so seekable-only files fail). */
  async probe(bytes: Buffer, signal?: AbortSignal): Promise<ProbeResult> {
    const child = spawn(
      this.paths.ffprobe,
      ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', 'pipe:0'],
      { stdio: ['pipe', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' },
    );
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-stderrKept);
    });
    const exited = new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    await feed(child.stdin, bytes).catch(() => undefined);
    const code = await exited;
    if (code !== 0) throw new FfmpegError(`ffprobe exited with ${code}`, meaningfulLines(stderr));
    return parseProbe(JSON.parse(Buffer.concat(out).toString('utf8')));
  }
}

async function feed(
  target: Writable,
  source: Buffer | AsyncIterable<Buffer> | undefined,
): Promise<void> {
  // ffmpeg may exit without reading a pipe to its end (it failed, or needed no more): the
  // reset then arrives after the pipeline has let go of the stream, and an unheard 'error'
  // would crash the process. The exit status tells what happened.
  target.on('error', () => undefined);
  if (source === undefined) {
    target.end();
    return;
  }
  if (Buffer.isBuffer(source)) {
    await pipeline([source], target);
    return;
  }
  // One buffer in flight: `pipeline` asks for the next as soon as `write` returns, while the
  // last may still be queued in the stream. Waiting for each write's callback lets a video
  // source reuse one frame buffer rather than allocate a new 0.7 MB one a frame, which left
  // the main thread's malloc heap 30 MiB larger after a few dozen videos.
  try {
    for await (const chunk of source) await write(target, chunk);
    target.end();
    await finished(target);
  } catch (error) {
    target.destroy();
    throw error;
  }
}

function write(target: Writable, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    target.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
}

function meaningfulLines(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.length > 0 && !/^[a-z_]+=/.test(line))
    .slice(-5)
    .join(' | ');
}

interface RawProbe {
  format?: { format_name?: string; duration?: string };
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    avg_frame_rate?: string;
    r_frame_rate?: string;
    duration?: string;
    sample_rate?: string;
    channels?: number;
  }[];
}

function parseProbe(raw: RawProbe): ProbeResult {
  const ms = (seconds: string | undefined) =>
    seconds === undefined || Number.isNaN(Number(seconds))
      ? null
      : Math.round(Number(seconds) * 1000);
  const rate = (fraction: string | undefined) => {
    const [num, den] = (fraction ?? '').split('/').map(Number);
    return num !== undefined && den !== undefined && den > 0 && num > 0 ? num / den : null;
  };
  return {
    format: raw.format?.format_name ?? 'unknown',
    durationMs: ms(raw.format?.duration),
    streams: (raw.streams ?? []).map((s) => ({
      type: s.codec_type === 'video' || s.codec_type === 'audio' ? s.codec_type : 'other',
      codec: s.codec_name ?? 'unknown',
      width: s.width ?? null,
      height: s.height ?? null,
      fps: s.codec_type === 'video' ? (rate(s.avg_frame_rate) ?? rate(s.r_frame_rate)) : null,
      durationMs: ms(s.duration),
      sampleRate: s.sample_rate === undefined ? null : Number(s.sample_rate),
      channels: s.channels ?? null,
    })),
  };
}
