// The built-in engines, each against a baseline measured in the same run on the same machine:
//   image   a 1024×1024 procedural image   vs  sharp rasterising a plain 1024² SVG to PNG
//   speech  eSpeak NG (npm, in a worker)   vs  the native `espeak-ng` (Debian package), same text
//   video   5 s of 720p text-to-video      vs  ffmpeg encoding its own 5 s 720p test pattern,
//                                              same encoder settings (the encoding floor)
//   avatar  a talking portrait, 5 s 720p   vs  the same floor
// Prints milliseconds (median of --runs), the speech real-time factor, and each ratio.
//
//   node bench/engines/engines.bench.ts [--runs 5]
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import sharp from 'sharp';
import type { ImageSettings } from '../../src/domain/kinds/image.kind.ts';
import { Ffmpeg } from '../../src/engines/media/ffmpeg.ts';
import { proceduralImageEngine } from '../../src/engines/procedural-image/procedural-image.engine.ts';
import { encodeWav } from '../../src/engines/speech/audio.ts';
import { closeEspeak, synthesize } from '../../src/engines/speech/espeak.ts';
import { mouthFromPhonemes } from '../../src/engines/speech/mouth.ts';
import { renderAvatarVideo } from '../../src/engines/video/avatar-video.ts';
import { renderTextToVideo } from '../../src/engines/video/text-to-video.ts';
import { type BenchRow, report } from '../report.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const ffmpeg = Ffmpeg.resolve();
const context = { signal: new AbortController().signal, reportProgress: () => {} };

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const rows: { what: string; atelier: string; baseline: string; ratio: string }[] = [];
const ms = (n: number) => `${n.toFixed(0)} ms`;
const measured: BenchRow[] = [];
const row = (what: string, ours: number, base: number, note = '') => {
  rows.push({
    what,
    atelier: ms(ours),
    baseline: ms(base) + note,
    ratio: `${(ours / base).toFixed(2)}×`,
  });
  const baselineName = note.trim().replace(/^\((.*)\)$/, '$1') || 'floor';
  measured.push({
    bench: 'engines',
    measure: what,
    atelier: ours,
    baseline: base,
    baselineName,
    unit: 'ms',
    higherIsBetter: false,
  });
};

// Image.
const settings: ImageSettings = {
  prompt: 'a red lighthouse on a cliff at dawn, gold and teal',
  negativePrompt: null,
  width: 1024,
  height: 1024,
  aspectRatio: '1:1',
  count: 1,
  seed: 7,
  format: 'png',
  elementIds: [],
};
const image = await median(() =>
  proceduralImageEngine.run(
    { taskId: 'b', kind: 'image', options: {}, settings, elements: [] },
    context,
  ),
);
const plainSvg = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="1024"><defs><linearGradient id="g"><stop offset="0" stop-color="#123"/><stop offset="1" stop-color="#fc6"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/></svg>',
);
const imageFloor = await median(() => sharp(plainSvg).png().toBuffer());
row('image 1024×1024 PNG', image, imageFloor, ' (sharp: plain SVG → PNG)');

// Speech: the same ~2,000 characters.
const sentence =
  'The harbour was quiet that evening, and the lanterns along the pier swayed in a light wind. ';
const text = sentence.repeat(Math.ceil(2000 / sentence.length)).slice(0, 2000);
let audioSeconds = 0;
const speech = await median(async () => {
  const audio = await synthesize({ text, voice: 'en-gb', speed: 1, pitch: 1 }, context.signal);
  audioSeconds = audio.samples.length / audio.sampleRate;
});
await closeEspeak();
const native = await median(() =>
  promisify(execFile)('espeak-ng', ['-v', 'en-gb', '--stdout', text], {
    maxBuffer: 64 * 1024 * 1024,
    encoding: 'buffer',
  }),
).catch(() => null);
if (native === null) {
  rows.push({
    what: 'speech, 2,000 characters',
    atelier: ms(speech),
    baseline: 'espeak-ng not installed (apt-get install espeak-ng)',
    ratio: '—',
  });
} else {
  row('speech, 2,000 characters', speech, native, ' (native espeak-ng)');
}

// Video and avatar: 5 s at 720p, against ffmpeg's own test pattern with the same encoder.
const floorArgs = [
  '-f',
  'lavfi',
  '-i',
  'testsrc2=size=1280x720:rate=24:duration=5',
  '-c:v',
  'libx264',
  '-preset',
  'veryfast',
  '-crf',
  '20',
  '-pix_fmt',
  'yuv420p',
  '-bf',
  '0',
  '-movflags',
  'empty_moov+default_base_moof',
  '-f',
  'mp4',
  'pipe:1',
];
const videoFloor = await median(() => ffmpeg.run({ args: floorArgs }));
const video = await median(() =>
  renderTextToVideo(
    ffmpeg,
    {
      prompt: 'lanterns drifting over a night lake',
      seed: 3,
      width: 1280,
      height: 720,
      fps: 24,
      durationSeconds: 5,
      elements: [],
    },
    context,
  ),
);
row('video: 5 s 720p text-to-video', video, videoFloor, ' (ffmpeg testsrc2, same encoder)');

const portrait = await sharp(
  Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="720" height="720"><rect width="100%" height="100%" fill="#246"/><circle cx="360" cy="330" r="220" fill="#eca"/></svg>',
  ),
)
  .png()
  .toBuffer();
const spoken = await synthesize(
  { text: 'Hello, and welcome to the studio. '.repeat(3), voice: 'en-us', speed: 1, pitch: 1 },
  context.signal,
);
const seconds = 5;
const samples = new Int16Array(seconds * spoken.sampleRate);
samples.set(spoken.samples.subarray(0, samples.length));
const mouth = mouthFromPhonemes(spoken.phonemes, seconds * 25, 25);
const avatar = await median(() =>
  renderAvatarVideo(
    ffmpeg,
    {
      portrait,
      width: 720,
      height: 720,
      fps: 25,
      mouth,
      audioWav: encodeWav(samples, spoken.sampleRate),
    },
    context,
  ),
);
await closeEspeak();
row('avatar: 5 s 720×720 with sound', avatar, videoFloor, ' (same floor, 1280×720)');

console.table(rows);
console.log(
  `speech real-time factor: ${(speech / 1000 / audioSeconds).toFixed(4)} (${audioSeconds.toFixed(1)} s of audio in ${ms(speech)})`,
);
report(measured);
