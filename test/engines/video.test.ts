import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { Ffmpeg, type ProbeResult } from '../../src/engines/media/ffmpeg.ts';
import { renderAvatarVideo } from '../../src/engines/video/avatar-video.ts';
import { maxZoom, planCamera, viewAt } from '../../src/engines/video/camera.ts';
import { renderImageToVideo } from '../../src/engines/video/image-to-video.ts';
import { renderTextToVideo } from '../../src/engines/video/text-to-video.ts';
import type { RenderContext, VideoJob } from '../../src/engines/video/video-job.ts';
import { cutWavBelow, readWavLayout } from '../../src/engines/video/wav.ts';
import { settledThisTurn } from '../helpers/settled.ts';

const ffmpeg = Ffmpeg.resolve();

const sun = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><circle cx="128" cy="128" r="90" fill="#ffd23f"/></svg>',
);

const textJob: VideoJob = {
  prompt: 'a red lighthouse by the ocean',
  seed: 1,
  width: 320,
  height: 180,
  fps: 24,
  durationSeconds: 1.5,
  elements: [sun],
};

/** A context that records progress and never aborts. */
function recording(): RenderContext & { readonly progress: number[] } {
  const progress: number[] = [];
  return {
    progress,
    signal: new AbortController().signal,
    reportProgress: (value) => progress.push(value),
  };
}

function assertProgress(progress: readonly number[]): void {
  assert.ok(progress.length >= 1);
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i]! > progress[i - 1]!, `progress goes up: ${progress.join(', ')}`);
  }
  assert.ok(progress[0]! >= 0);
  assert.equal(progress.at(-1), 1);
}

/** Asserts an H.264 stream of the size, rate and length asked for (±0.1 s). */
function assertVideo(
  probe: ProbeResult,
  expected: { width: number; height: number; fps: number; seconds: number },
): void {
  const video = probe.streams.find((s) => s.type === 'video');
  assert.ok(video, 'a video stream');
  assert.equal(video.codec, 'h264');
  assert.deepEqual([video.width, video.height], [expected.width, expected.height]);
  assert.ok(Math.abs(video.fps! - expected.fps) < 0.01, `fps ${video.fps}`);
  assert.ok(Math.abs(video.durationMs! - expected.seconds * 1000) <= 100, `${video.durationMs}`);
  assert.ok(Math.abs(probe.durationMs! - expected.seconds * 1000) <= 100, `${probe.durationMs}`);
}

/** Frame `index` of a video as raw RGB pixels, decoded by ffmpeg from the bytes. */
async function frameOf(video: Buffer, index: number): Promise<Buffer> {
  const png = await ffmpeg.run({
    args: [
      ...['-i', 'pipe:0', '-vf', `select=eq(n\\,${index})`, '-vsync', '0', '-frames:v', '1'],
      ...['-f', 'image2pipe', '-vcodec', 'png', 'pipe:1'],
    ],
    stdin: video,
  });
  return sharp(png).removeAlpha().raw().toBuffer();
}

/** Mean absolute difference of two raw images (0..255), over all or part of the frame. */
function difference(
  a: Buffer,
  b: Buffer,
  width: number,
  inside: (x: number, y: number) => boolean = () => true,
): number {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < a.length; i += 3) {
    const pixel = i / 3;
    if (!inside(pixel % width, Math.floor(pixel / width))) continue;
    sum +=
      Math.abs(a[i]! - b[i]!) + Math.abs(a[i + 1]! - b[i + 1]!) + Math.abs(a[i + 2]! - b[i + 2]!);
    count += 3;
  }
  return sum / count;
}

/** A mono 16-bit WAV of a 220 Hz tone. */
function toneWav(seconds: number, sampleRate = 22_050): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) {
    wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / sampleRate)), 44 + i * 2);
  }
  return wav;
}

/** ffmpeg processes whose parent is this test process. */
async function ffmpegChildren(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('ps', ['-o', 'pid=,ppid=,comm=', '-A']);
  return stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, comm]) => ppid === String(process.pid) && comm?.startsWith('ffmpeg'))
    .map(([pid]) => pid!);
}

describe('text-to-video', () => {
  it('renders H.264 of the size, rate and length asked for, reporting progress', async () => {
    const context = recording();
    const video = await renderTextToVideo(ffmpeg, textJob, context);
    assertVideo(await ffmpeg.probe(video), { width: 320, height: 180, fps: 24, seconds: 1.5 });
    assertProgress(context.progress);
    const [first, last] = await Promise.all([frameOf(video, 0), frameOf(video, 35)]);
    assert.ok(difference(first, last, 320) > 2, 'the scene moves');
  });

  it('gives the same bytes for the same prompt and seed, other pictures for another seed', async () => {
    const [a, b, other] = await Promise.all([
      renderTextToVideo(ffmpeg, textJob, recording()),
      renderTextToVideo(ffmpeg, textJob, recording()),
      renderTextToVideo(ffmpeg, { ...textJob, seed: 2 }, recording()),
    ]);
    assert.ok(a.equals(b));
    const [frameA, frameOther] = await Promise.all([frameOf(a, 12), frameOf(other, 12)]);
    assert.ok(difference(frameA, frameOther, 320) > 10);
  });

  it('renders 5 s of 1280x720 at 24 fps to the exact length', async (t) => {
    const started = performance.now();
    const job = { ...textJob, width: 1280, height: 720, durationSeconds: 5 };
    const video = await renderTextToVideo(ffmpeg, job, recording());
    t.diagnostic(`rendered in ${Math.round(performance.now() - started)} ms`);
    assertVideo(await ffmpeg.probe(video), { width: 1280, height: 720, fps: 24, seconds: 5 });
  });

  it('refuses an odd frame size', async () => {
    await assert.rejects(renderTextToVideo(ffmpeg, { ...textJob, width: 321 }, recording()), {
      name: 'RangeError',
    });
  });

  it('stops at once when aborted, leaving no ffmpeg behind', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    const long = { ...textJob, width: 640, height: 360, durationSeconds: 120 };
    const render = renderTextToVideo(ffmpeg, long, {
      signal: controller.signal,
      reportProgress: () => {},
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < 40 && (await ffmpegChildren()).length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50)); // a loaded machine spawns late
    }
    assert.equal((await ffmpegChildren()).length, 1, 'ffmpeg runs before the abort');
    controller.abort(reason);
    // At once: before the event loop's next turn, so before ffmpeg's exit could be seen.
    assert.equal(await settledThisTurn(render), reason);
    let children = await ffmpegChildren();
    for (let i = 0; i < 20 && children.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      children = await ffmpegChildren();
    }
    assert.deepEqual(children, []);
  });
});

describe('image-to-video', () => {
  it('moves a camera over the image, at the size, rate and length asked for', async () => {
    const image = await sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><defs><linearGradient id="g"><stop offset="0" stop-color="#f40"/><stop offset="1" stop-color="#04f"/></linearGradient></defs><rect width="800" height="600" fill="url(#g)"/><circle cx="400" cy="300" r="120" fill="#ff0"/><rect x="100" y="80" width="80" height="80" fill="#0a0"/></svg>`,
      ),
    )
      .jpeg()
      .toBuffer();
    const context = recording();
    const job = { ...textJob, durationSeconds: 2, image };
    const video = await renderImageToVideo(ffmpeg, job, context);
    assertVideo(await ffmpeg.probe(video), { width: 320, height: 180, fps: 24, seconds: 2 });
    assertProgress(context.progress);
    const [first, last] = await Promise.all([frameOf(video, 0), frameOf(video, 47)]);
    assert.ok(difference(first, last, 320) > 2, 'first and last frames differ');
  });

  it('keeps every camera view inside the picture, at the frame aspect', () => {
    const moves = new Set<string>();
    for (let seed = 0; seed < 60; seed++) {
      const plan = planCamera('a cat', seed);
      moves.add(plan.move);
      for (const progress of [0, 0.3, 0.7, 1]) {
        const view = viewAt(plan, 400 * maxZoom, 300 * maxZoom, progress);
        assert.ok(view.left >= 0 && view.top >= 0);
        assert.ok(view.left + view.width <= 400 * maxZoom + 1e-9);
        assert.ok(view.top + view.height <= 300 * maxZoom + 1e-9);
        assert.ok(Math.abs(view.width / view.height - 4 / 3) < 1e-9);
      }
    }
    assert.equal(moves.size, 6, 'every move is chosen by some seed');
  });
});

describe('avatar video', () => {
  const side = 320;
  const fps = 24;
  const frames = 36;
  const mouth = Float32Array.from({ length: frames }, (_, i) => (i < frames / 2 ? 0 : 1));

  async function portrait(): Promise<Buffer> {
    return sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400"><rect width="400" height="400" fill="#6a8caf"/><circle cx="200" cy="190" r="130" fill="#e0b090"/></svg>`,
      ),
    )
      .png()
      .toBuffer();
  }

  for (const audioSeconds of [1.1, 2.5]) {
    it(`makes video and AAC audio of the frames' length from ${audioSeconds} s of audio`, async () => {
      const context = recording();
      const video = await renderAvatarVideo(
        ffmpeg,
        {
          portrait: await portrait(),
          width: side,
          height: side,
          fps,
          mouth,
          audioWav: toneWav(audioSeconds),
        },
        context,
      );
      const probe = await ffmpeg.probe(video);
      const seconds = frames / fps;
      assertVideo(probe, { width: side, height: side, fps, seconds });
      const audio = probe.streams.find((s) => s.type === 'audio');
      assert.ok(audio, 'an audio stream');
      assert.equal(audio.codec, 'aac');
      assert.ok(Math.abs(audio.durationMs! - seconds * 1000) <= 100, `audio ${audio.durationMs}`);
      assertProgress(context.progress);
    });
  }

  it('opens the mouth where the mouth is and changes nothing else', async () => {
    const video = await renderAvatarVideo(
      ffmpeg,
      { portrait: await portrait(), width: side, height: side, fps, mouth, audioWav: toneWav(1) },
      recording(),
    );
    const [closed, open] = await Promise.all([frameOf(video, 6), frameOf(video, 30)]);
    // The mouth sits at the middle across, 68% down, 20% of the shorter side wide.
    const nearMouth = (x: number, y: number) =>
      Math.abs(x - side * 0.5) < side * 0.1 && Math.abs(y - side * 0.68) < side * 0.06;
    const awayFromMouth = (x: number, y: number) =>
      Math.abs(x - side * 0.5) > side * 0.2 || Math.abs(y - side * 0.68) > side * 0.15;
    assert.ok(difference(closed, open, side, nearMouth) > 20, 'the mouth opens');
    assert.ok(difference(closed, open, side, awayFromMouth) < 1, 'the rest stays');
  });
});

describe('WAV cutting', () => {
  it('cuts to fewer samples than the length, keeping a valid header', () => {
    const cut = cutWavBelow(toneWav(2), 1);
    const layout = readWavLayout(cut);
    assert.equal(layout.dataLength / layout.blockAlign, 22_049);
    assert.equal(cut.readUInt32LE(4), cut.length - 8);
    assert.equal(layout.dataStart + layout.dataLength, cut.length);
  });

  it('leaves a shorter WAV alone and refuses what is not a WAV', () => {
    const short = toneWav(0.5);
    assert.equal(cutWavBelow(short, 1), short);
    assert.throws(() => cutWavBelow(Buffer.from('not a wav at all'), 1), RangeError);
  });
});
