// Memory that stays flat: the resident memory (RSS) of the server `npm start` runs (its V8
// flags, `bin/atelier serve`, the embedded database) after `--generations` generations of each
// built-in kind — image, speech, video, talking avatar, each at its smallest settings — against
// the same server idle before them. Each is submitted through GraphQL with the first account's
// API key and polled until it finishes, `--concurrency` at a time; the server is left idle for
// `--settle` seconds before each reading (VmRSS of /proc/PID/status).
//
//   node bench/memory/memory.bench.ts [--generations 1000] [--concurrency 8] [--settle 10]
//
// Issue 34's target: after / before ≤ 1.3×.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { graphqlClient } from '../graphql-client.ts';
import { npmStart, residentMiB, root, serverEnv, stop } from '../npm-start.ts';
import { type BenchRow, report } from '../report.ts';

const { values } = parseArgs({
  options: {
    generations: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '8' },
    settle: { type: 'string', default: '10' },
  },
});
const perKind = Number(values.generations);
const concurrency = Number(values.concurrency);
const settleMs = Number(values.settle) * 1000;

/** The server and the first account's API key, read from the first start's banner. */
async function startAtelier(
  dataDir: string,
): Promise<{ child: ChildProcess; url: string; apiKey: string }> {
  const { url, env } = await serverEnv(dataDir);
  const child = spawn(process.execPath, npmStart, {
    cwd: root,
    env: { ...env, RATE_LIMIT_PER_WINDOW: '0', DATABASE_URL: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    said += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`Atelier exited (${code}) before it was ready:\n${said}`);
  });
  for (;;) {
    const apiKey = /\b(svc_[A-Za-z0-9]+)\b/.exec(said)?.[1];
    if (apiKey !== undefined && (await status(`${url}/readyz`)) === 200) {
      exited.catch(() => {}); // from here an exit is the run's error, seen by its requests
      return { child, url, apiKey };
    }
    await Promise.race([sleep(50), exited]);
  }
}

const status = (url: string) =>
  fetch(url).then(
    (res) => res.status,
    () => 0,
  );

const dataDir = await mkdtemp(path.join(tmpdir(), 'atelier-bench-memory-'));
const server = await startAtelier(dataDir);

const graphql = graphqlClient(server.url, server.apiKey);

/** Enough credits for every generation (the first account starts with 1,000). */
async function grantCredits(): Promise<void> {
  const { getUserByPrivateId } = await graphql<{ getUserByPrivateId: { id: string } }>(
    '{ getUserByPrivateId { id } }',
  );
  await graphql(
    'mutation ($input: CreditAdjustmentInput!) { adminGrantCredits(input: $input) { amount } }',
    {
      input: {
        accountId: getUserByPrivateId.id,
        category: 'standard',
        amount: 10 * perKind + 100,
        reason: 'memory benchmark',
      },
    },
  );
}

/** An avatar of the account (a 512² portrait, uploaded as a client would). */
async function createAvatar(): Promise<string> {
  const portrait = await sharp({
    create: { width: 512, height: 512, channels: 3, background: '#c96' },
  })
    .png()
    .toBuffer();
  const { createUpload } = await graphql<{ createUpload: { mediaId: string; uploadUrl: string } }>(
    'mutation ($input: CreateUploadInput!) { createUpload(input: $input) { mediaId uploadUrl } }',
    { input: { kind: 'image', mimeType: 'image/png', bytes: portrait.length } },
  );
  const put = await fetch(createUpload.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': 'image/png' },
    body: new Uint8Array(portrait),
  });
  if (put.status !== 200) throw new Error(`the portrait's upload answered ${put.status}`);
  const { createAvatar } = await graphql<{ createAvatar: { avatarId: string } }>(
    'mutation ($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
    { input: { name: 'Ada', portraitMediaId: createUpload.mediaId, voiceModelId: 'voc_en-us' } },
  );
  return createAvatar.avatarId;
}

/** Each kind's mutation and its smallest, cheapest input; `i` varies the prompt. */
function kinds(avatarId: string): Record<string, (i: number) => [string, Record<string, unknown>]> {
  return {
    image: (i) => [
      'generateImage',
      {
        modelId: 'mdl_atelier-sketch',
        prompt: `a shape ${i}`,
        width: 512,
        height: 512,
        format: 'png',
      },
    ],
    speech: (i) => [
      'generateSpeech',
      {
        modelId: 'mdl_atelier-voice',
        voiceModelId: 'voc_en-us',
        text: `Hello ${i}.`,
        format: 'wav',
      },
    ],
    video: (i) => [
      'generateVideo',
      {
        modelId: 'mdl_atelier-motion',
        prompt: `a shape ${i}`,
        resolution: '480p',
        aspectRatio: '1:1',
        durationSeconds: 1,
        fps: 24,
      },
    ],
    avatar: (i) => [
      'generateAvatarVideo',
      { modelId: 'mdl_atelier-avatar', avatarId, script: `Hi ${i}.`, resolution: '512p' },
    ],
  };
}

const inputTypes: Record<string, string> = {
  generateImage: 'GenerateImageInput',
  generateSpeech: 'GenerateSpeechInput',
  generateVideo: 'GenerateVideoInput',
  generateAvatarVideo: 'GenerateAvatarVideoInput',
};

/** Submits one generation and polls its task until it finishes; throws unless it succeeded. */
async function generate(mutation: string, input: Record<string, unknown>): Promise<void> {
  const submitted = await graphql<Record<string, { taskId: string }>>(
    `mutation ($input: ${inputTypes[mutation]}!) { ${mutation}(input: $input) { taskId } }`,
    { input },
  );
  const taskId = submitted[mutation]!.taskId;
  for (;;) {
    const { getTask } = await graphql<{
      getTask: { status: string; finishCode: number | null; finishMessage: string | null };
    }>('query ($id: ID!) { getTask(taskId: $id) { status finishCode finishMessage } }', {
      id: taskId,
    });
    if (getTask.status === 'finished') {
      if (getTask.finishCode !== 0)
        throw new Error(
          `${mutation} finished with ${getTask.finishCode}: ${getTask.finishMessage}`,
        );
      return;
    }
    await sleep(50);
  }
}

/** Every kind `perKind` times, interleaved, `concurrency` at a time. */
async function generateAll(avatarId: string): Promise<void> {
  const each = Object.values(kinds(avatarId));
  const jobs = Array.from({ length: perKind * each.length }, (_, n) =>
    each[n % each.length]!(Math.floor(n / each.length)),
  );
  let next = 0;
  let done = 0;
  const began = performance.now();
  const lane = async () => {
    while (next < jobs.length) {
      const [mutation, input] = jobs[next++]!;
      await generate(mutation, input);
      if (++done % 400 === 0)
        console.log(
          `  ${done}/${jobs.length} generations, ${((performance.now() - began) / 1000).toFixed(0)} s, RSS ${residentMiB(server.child.pid!).rssMiB.toFixed(0)} MiB`,
        );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

let idle: number;
let after: number;
try {
  await sleep(settleMs);
  idle = residentMiB(server.child.pid!).rssMiB;
  console.log(`idle after start: ${idle.toFixed(0)} MiB`);
  await grantCredits();
  const avatarId = await createAvatar();
  const began = performance.now();
  await generateAll(avatarId);
  console.log(
    `${4 * perKind} generations in ${((performance.now() - began) / 1000).toFixed(0)} s, RSS ${residentMiB(server.child.pid!).rssMiB.toFixed(0)} MiB at the end`,
  );
  await sleep(settleMs);
  after = residentMiB(server.child.pid!).rssMiB;
} finally {
  await stop(server.child);
  await rm(dataDir, { recursive: true, force: true });
}

const rows: BenchRow[] = [
  {
    bench: 'memory',
    measure: `idle RSS after ${perKind} generations of each kind`,
    atelier: after,
    baseline: idle,
    baselineName: 'the same server idle before them',
    unit: 'MiB',
    higherIsBetter: false,
  },
];
console.log(`settled ${settleMs / 1000} s before each reading`);
console.table(
  rows.map((r) => ({
    measure: r.measure,
    after: `${r.atelier.toFixed(0)} MiB`,
    before: `${r.baseline.toFixed(0)} MiB`,
    ratio: `${(r.atelier / r.baseline).toFixed(2)}×`,
  })),
);
report(rows);
