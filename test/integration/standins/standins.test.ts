import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import WebSocket from 'ws';
import { ComfyStandin } from '../../helpers/standins/comfyui.ts';
import type { HistoryEntry } from '../../helpers/standins/comfyui-run.ts';
import { ReplicateStandin } from '../../helpers/standins/replicate.ts';
import { nsfwError } from '../../helpers/standins/replicate-prediction.ts';

// The protocol stand-ins driven with plain fetch and WebSocket, exactly as the protocol notes in
// ../shared/protocols/ describe the providers, so their fidelity is checked apart from our engines.

interface ComfyEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A socket on the stand-in's /ws whose JSON events are collected; `until` waits for one. */
async function comfySocket(url: string, clientId: string) {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?clientId=${clientId}`);
  const events: ComfyEvent[] = [];
  const waiting = new Set<() => void>();
  socket.on('message', (raw) => {
    events.push(JSON.parse(String(raw)) as ComfyEvent);
    for (const check of [...waiting]) check();
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const until = (holds: (event: ComfyEvent) => boolean): Promise<ComfyEvent> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = events.find(holds);
        if (found === undefined) return;
        clearTimeout(timer);
        waiting.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`no such event among ${JSON.stringify(events.map((e) => e.type))}`));
      }, 10_000);
      waiting.add(check);
      check();
    });
  return { socket, events, until };
}

/** The core text-to-image graph in API format. */
function textToImage(checkpoint: string, width = 64, height = 48): Record<string, unknown> {
  return {
    '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: checkpoint } },
    '5': { class_type: 'EmptyLatentImage', inputs: { width, height, batch_size: 1 } },
    '6': { class_type: 'CLIPTextEncode', inputs: { text: 'a red fox', clip: ['4', 1] } },
    '7': { class_type: 'CLIPTextEncode', inputs: { text: '', clip: ['4', 1] } },
    '3': {
      class_type: 'KSampler',
      inputs: {
        model: ['4', 0],
        seed: 7,
        steps: 20,
        cfg: 7,
        sampler_name: 'euler',
        scheduler: 'normal',
        positive: ['6', 0],
        negative: ['7', 0],
        latent_image: ['5', 0],
        denoise: 1,
      },
    },
    '8': { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
    '9': { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'atelier' } },
  };
}

async function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('ComfyUI protocol stand-in', () => {
  let comfy: ComfyStandin;
  const ckpt = 'sd_xl_base_1.0.safetensors';
  before(async () => {
    comfy = await ComfyStandin.start({ checkpoints: [ckpt] });
  });
  after(() => comfy.close());

  it('queues, runs with progress and serves the PNG it reports, as a ComfyUI client sees it', async () => {
    const ws = await comfySocket(comfy.url, 'client-a');
    assert.deepEqual(ws.events[0], {
      type: 'status',
      data: { status: { exec_info: { queue_remaining: 0 } }, sid: 'client-a' },
    });
    comfy.script({ manual: true, steps: 2 });
    const submitted = await postJson(`${comfy.url}/api/prompt`, {
      prompt: textToImage(ckpt, 64, 48),
      client_id: 'client-a',
      prompt_id: 'p-1',
    });
    assert.equal(submitted.status, 200);
    assert.deepEqual(await submitted.json(), { prompt_id: 'p-1', number: 0, node_errors: {} });

    const run = await comfy.runOf('p-1');
    await run.pace.waitingAt('start');
    assert.deepEqual(await (await fetch(`${comfy.url}/history/p-1`)).json(), {});
    const queue = (await (await fetch(`${comfy.url}/queue`)).json()) as Record<string, unknown[][]>;
    assert.deepEqual(
      queue.queue_running?.map((item) => item[1]),
      ['p-1'],
    );
    run.pace.release();

    const last = await ws.until((e) => e.type === 'executing' && e.data.node === null);
    assert.deepEqual(last.data, { node: null, prompt_id: 'p-1' });
    assert.equal(ws.events.at(-1), last, 'executing {node: null} comes last');
    const perPrompt = ws.events.filter((e) => e.data.prompt_id === 'p-1');
    const kinds = [...new Set(perPrompt.map((e) => e.type))];
    assert.deepEqual(kinds, [
      'execution_start',
      'execution_cached',
      'executing',
      'progress',
      'executed',
      'execution_success',
    ]);
    const progress = perPrompt.filter((e) => e.type === 'progress').map((e) => e.data);
    assert.deepEqual(progress, [
      { value: 1, max: 2, prompt_id: 'p-1', node: '3' },
      { value: 2, max: 2, prompt_id: 'p-1', node: '3' },
    ]);

    const history = (await (await fetch(`${comfy.url}/history/p-1`)).json()) as {
      'p-1': HistoryEntry;
    };
    assert.equal(history['p-1'].status.status_str, 'success');
    assert.equal(history['p-1'].status.completed, true);
    const image = { filename: 'atelier_00001_.png', subfolder: '', type: 'output' };
    assert.deepEqual(history['p-1'].outputs['9'], { images: [image] });
    const view = await fetch(`${comfy.url}/view?${new URLSearchParams(image)}`);
    assert.equal(view.headers.get('content-type'), 'image/png');
    const { width, height, format } = await sharp(Buffer.from(await view.arrayBuffer())).metadata();
    assert.deepEqual({ width, height, format }, { width: 64, height: 48, format: 'png' });
    assert.equal((await fetch(`${comfy.url}/view?filename=../x.png`)).status, 400);
    assert.equal((await fetch(`${comfy.url}/view?filename=a.png&subfolder=../..`)).status, 403);
    ws.socket.close();
  });

  it('refuses an invalid graph synchronously, as ComfyUI does, and queues nothing', async () => {
    const unknown = await postJson(`${comfy.url}/prompt`, {
      prompt: { '1': { class_type: 'NoSuchNode', inputs: {} } },
    });
    assert.equal(unknown.status, 400);
    const unknownBody = (await unknown.json()) as { error: { type: string; message: string } };
    assert.equal(unknownBody.error.type, 'invalid_prompt');
    assert.equal(
      unknownBody.error.message,
      'Cannot execute because node NoSuchNode does not exist.',
    );

    const badCheckpoint = await postJson(`${comfy.url}/prompt`, {
      prompt: textToImage('x.safetensors'),
    });
    assert.equal(badCheckpoint.status, 400);
    const body = (await badCheckpoint.json()) as {
      error: { type: string };
      node_errors: Record<string, { dependent_outputs: string[]; errors: { type: string }[] }>;
    };
    assert.equal(body.error.type, 'prompt_outputs_failed_validation');
    assert.deepEqual(body.node_errors['4']?.dependent_outputs, ['9']);
    assert.equal(body.node_errors['4']?.errors[0]?.type, 'value_not_in_list');
    assert.deepEqual(await (await fetch(`${comfy.url}/queue`)).json(), {
      queue_running: [],
      queue_pending: [],
    });
  });

  it('reports a failing node with execution_error and an error history entry', async () => {
    const ws = await comfySocket(comfy.url, 'client-b');
    comfy.script({ fail: { message: 'NSFW content detected', exceptionType: 'ValueError' } });
    const res = await postJson(`${comfy.url}/prompt`, {
      prompt: textToImage(ckpt),
      client_id: 'client-b',
    });
    const { prompt_id } = (await res.json()) as { prompt_id: string };
    const error = await ws.until((e) => e.type === 'execution_error');
    assert.equal(error.data.prompt_id, prompt_id);
    assert.equal(error.data.node_id, '3');
    assert.equal(error.data.node_type, 'KSampler');
    assert.equal(error.data.exception_type, 'ValueError');
    assert.equal(error.data.exception_message, 'NSFW content detected\n');
    const entry = await comfy.finished(prompt_id);
    assert.deepEqual(entry.status.status_str, 'error');
    assert.equal(entry.status.completed, false);
    await ws.until((e) => e.type === 'executing' && e.data.node === null);
    ws.socket.close();
  });

  it('interrupts the running prompt and deletes a pending one, both answering 200 empty', async () => {
    const ws = await comfySocket(comfy.url, 'client-c');
    comfy.script({ manual: true });
    const first = await postJson(`${comfy.url}/prompt`, {
      prompt: textToImage(ckpt),
      client_id: 'client-c',
    });
    const second = await postJson(`${comfy.url}/prompt`, {
      prompt: textToImage(ckpt),
      client_id: 'client-c',
    });
    const { prompt_id: running } = (await first.json()) as { prompt_id: string };
    const { prompt_id: pending } = (await second.json()) as { prompt_id: string };
    const run = await comfy.runOf(running);
    await run.pace.waitingAt('start');
    run.pace.advance(3); // start, progress 1, progress 2
    await run.pace.waitingAt('progress 3');

    const deleted = await postJson(`${comfy.url}/queue`, { delete: [pending] });
    assert.deepEqual([deleted.status, await deleted.text()], [200, '']);
    const interrupted = await fetch(`${comfy.url}/interrupt`, { method: 'POST' });
    assert.deepEqual([interrupted.status, await interrupted.text()], [200, '']);

    const event = await ws.until((e) => e.type === 'execution_interrupted');
    assert.equal(event.data.prompt_id, running);
    assert.equal(event.data.node_id, '3');
    const entry = await comfy.finished(running);
    assert.equal(entry.status.status_str, 'error');
    assert.deepEqual(await (await fetch(`${comfy.url}/history/${pending}`)).json(), {});
    assert.deepEqual(await (await fetch(`${comfy.url}/queue`)).json(), {
      queue_running: [],
      queue_pending: [],
    });
    assert.equal(comfy.http.matching((r) => r.path === '/interrupt').length, 1);
    ws.socket.close();
  });
});

describe('Replicate protocol stand-in', () => {
  let replicate: ReplicateStandin;
  before(async () => {
    replicate = await ReplicateStandin.start({ token: 'r8_test' });
  });
  after(() => replicate.close());

  const create = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${replicate.apiBase}/models/black-forest-labs/flux-schnell/predictions`, {
      method: 'POST',
      headers: { authorization: 'Bearer r8_test', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const get = async (url: string): Promise<Record<string, unknown>> =>
    (await fetch(url, { headers: { authorization: 'Bearer r8_test' } })).json() as Promise<
      Record<string, unknown>
    >;

  it('answers Prefer: wait with the finished prediction, whose output URLs it serves', async () => {
    const res = await create(
      { input: { prompt: 'a red fox', num_outputs: 2, width: 32, height: 24 } },
      { prefer: 'wait=30' },
    );
    assert.equal(res.status, 201);
    const prediction = (await res.json()) as Record<string, unknown> & {
      output: string[];
      urls: Record<string, string>;
    };
    assert.equal(prediction.status, 'succeeded');
    assert.equal(prediction.model, 'black-forest-labs/flux-schnell');
    assert.equal(prediction.version, 'hidden');
    assert.equal(prediction.error, null);
    for (const key of ['created_at', 'started_at', 'completed_at', 'metrics']) {
      assert.ok(prediction[key] !== undefined, `${key} is set on a finished prediction`);
    }
    assert.equal(prediction.urls.get, `${replicate.apiBase}/predictions/${prediction.id}`);
    assert.deepEqual(await get(prediction.urls.get), prediction);
    assert.equal(prediction.output.length, 2);
    // Files on the API's own origin are its token's (Replicate's API document).
    assert.equal((await fetch(prediction.output[0]!)).status, 401);
    const file = await fetch(prediction.output[0]!, {
      headers: { authorization: 'Bearer r8_test' },
    });
    const { width, height } = await sharp(Buffer.from(await file.arrayBuffer())).metadata();
    assert.deepEqual({ width, height }, { width: 32, height: 24 });
  });

  it('reports a refusal as a failed prediction, and auth and throttling as HTTP errors', async () => {
    replicate.script({ fail: nsfwError });
    const created = (await (await create({ input: { prompt: 'x' } })).json()) as {
      id: string;
      status: string;
      urls: { get: string };
    };
    assert.equal(created.status, 'starting');
    await replicate.predictions.get(created.id)?.settled();
    const failed = await get(created.urls.get);
    assert.deepEqual([failed.status, failed.error, failed.output], ['failed', nsfwError, null]);

    const anonymous = await fetch(created.urls.get);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('content-type'), 'application/problem+json');
    assert.deepEqual(await anonymous.json(), {
      title: 'Unauthenticated',
      detail: 'You did not pass an authentication token',
      status: 401,
    });
    replicate.throttle(1, 2);
    const throttled = await create({ input: { prompt: 'x' } });
    assert.deepEqual([throttled.status, throttled.headers.get('retry-after')], [429, '2']);
    assert.match(((await throttled.json()) as { detail: string }).detail, /throttled/);
    const invalid = await create({ input: {} });
    assert.equal(invalid.status, 422);
  });

  it('cancels a running prediction and records that the cancel reached it', async () => {
    replicate.script({ manual: true });
    const before = replicate.predictions.size;
    const created = (await (await create({ input: { prompt: 'slow' } })).json()) as {
      id: string;
      urls: { cancel: string; get: string };
    };
    const prediction = replicate.predictions.get(created.id)!;
    prediction.pace.advance(2); // start, log 1
    await prediction.pace.waitingAt('log 2');
    assert.equal((await get(created.urls.get)).status, 'processing');

    const canceled = await fetch(created.urls.cancel, {
      method: 'POST',
      headers: { authorization: 'Bearer r8_test' },
    });
    assert.equal(canceled.status, 200);
    assert.equal(((await canceled.json()) as { status: string }).status, 'canceled');
    const again = await fetch(created.urls.cancel, {
      method: 'POST',
      headers: { authorization: 'Bearer r8_test' },
    });
    assert.equal(((await again.json()) as { status: string }).status, 'canceled');
    await replicate.http.received((r) => r.path === `/v1/predictions/${created.id}/cancel`);
    assert.equal(replicate.predictions.size, before + 1);
  });
});
