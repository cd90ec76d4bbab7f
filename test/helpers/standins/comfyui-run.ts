import sharp from 'sharp';
import { asLink, upstream, type Workflow } from './comfyui-graph.ts';
import { Pace } from './pace.ts';

/**
 * One prompt's execution on the ComfyUI stand-in, in the event order of
 * `../shared/protocols/comfyui.md` ("WebSocket", "Normal order"): `execution_start`,
 * `execution_cached`, then per node `executing`, several `progress {value,max,prompt_id,node}`
 * for a sampler, `executed` with the node's ui output; then `execution_success`, or
 * `execution_error` / `execution_interrupted`. Outputs have the shapes of "Output node shapes":
 * SaveImage/PreviewImage `images`, core SaveVideo `images` + `animated: [true]`, VHS `gifs`.
 */

/** What the test wants the next prompt's run to do. */
export interface ComfyScript {
  /** Progress steps reported per sampler node (default 3). */
  readonly steps?: number;
  /** Wait at every step for `run.pace.advance()`; never advanced, the run hangs until interrupted. */
  readonly manual?: boolean;
  /** Raise at the sampler (or the last node): `execution_error` with this message and type. */
  readonly fail?: { readonly message: string; readonly exceptionType?: string };
  /** The bytes every save node writes (a video, an oversized file) instead of a rendered PNG. */
  readonly file?: { readonly bytes: Buffer; readonly extension: string };
}

/** `[number, prompt_id, prompt, extra_data, outputs_to_execute]`, as in `/queue` and history. */
export type QueueItem = [number, string, Workflow, { client_id?: string }, string[]];

export interface HistoryEntry {
  prompt: QueueItem;
  outputs: Record<string, Record<string, unknown>>;
  status: { status_str: 'success' | 'error'; completed: boolean; messages: [string, unknown][] };
  meta: Record<
    string,
    { node_id: string; display_node: string; parent_node: null; real_node_id: string }
  >;
}

/** What a run needs from its server. */
export interface RunHost {
  /** `toAll`: when the prompt has no client_id, send to every socket rather than to none. */
  send(
    type: string,
    data: Record<string, unknown>,
    clientId: string | undefined,
    toAll: boolean,
  ): void;
  /** Stores an output file and returns the name it got. */
  save(
    type: 'output' | 'temp',
    subfolder: string,
    prefix: string,
    extension: string,
    bytes: Buffer,
    counterStyle: 'comfy' | 'vhs',
  ): string;
  now(): number;
}

class ScriptedFailure extends Error {}

export class ComfyRun {
  readonly item: QueueItem;
  readonly script: ComfyScript;
  readonly pace: Pace;
  #controller = new AbortController();
  #current: string | undefined;

  constructor(item: QueueItem, script: ComfyScript) {
    this.item = item;
    this.script = script;
    this.pace = new Pace(script.manual === true);
  }

  get promptId(): string {
    return this.item[1];
  }

  get workflow(): Workflow {
    return this.item[2];
  }

  /** The node executing now, while the run runs. */
  get currentNode(): string | undefined {
    return this.#current;
  }

  /** Stops the run at its current step, as `/interrupt` does. */
  interrupt(): void {
    this.#controller.abort(new Error('interrupted'));
  }

  async execute(host: RunHost): Promise<HistoryEntry> {
    const [, prompt_id, workflow, extraData, outputNodes] = this.item;
    const clientId = extraData.client_id;
    const signal = this.#controller.signal;
    const messages: [string, unknown][] = [];
    const emit = (type: string, data: Record<string, unknown>, toAll = false) =>
      host.send(type, data, clientId, toAll);
    const record = (type: string, data: Record<string, unknown>, toAll = false) => {
      const stamped = { ...data, prompt_id, timestamp: host.now() };
      messages.push([type, stamped]);
      emit(type, stamped, toAll);
    };
    const order = [...new Set(outputNodes.flatMap((id) => upstream(workflow, id)))];
    const failAt = order.find((id) => workflow[id]!.class_type === 'KSampler') ?? order.at(-1);
    const executed: string[] = [];
    const outputs: HistoryEntry['outputs'] = {};
    let current = order[0] ?? '';
    const entry = (ok: boolean): HistoryEntry => ({
      prompt: this.item,
      outputs,
      status: { status_str: ok ? 'success' : 'error', completed: ok, messages },
      meta: Object.fromEntries(
        Object.keys(outputs).map((id) => [
          id,
          { node_id: id, display_node: id, parent_node: null, real_node_id: id },
        ]),
      ),
    });
    record('execution_start', {});
    record('execution_cached', { nodes: [] });
    try {
      await this.pace.step('start', signal);
      for (const id of order) {
        current = id;
        this.#current = id;
        emit('executing', { node: id, display_node: id, prompt_id });
        if (workflow[id]!.class_type === 'KSampler') {
          const max = this.script.steps ?? 3;
          for (let value = 1; value <= max; value += 1) {
            await this.pace.step(`progress ${value}`, signal);
            emit('progress', { value, max, prompt_id, node: id }, true);
          }
        }
        if (this.script.fail !== undefined && id === failAt)
          throw new ScriptedFailure(this.script.fail.message);
        const ui = await this.#output(id, host);
        if (ui !== undefined) {
          outputs[id] = ui;
          emit('executed', { node: id, display_node: id, output: ui, prompt_id });
        }
        executed.push(id);
      }
      this.#current = undefined;
      await this.pace.step('finish', signal);
      record('execution_success', {});
      return entry(true);
    } catch (error) {
      this.#current = undefined;
      const node = { node_id: current, node_type: workflow[current]?.class_type, executed };
      if (signal.aborted) {
        record('execution_interrupted', node, true);
      } else {
        const message = error instanceof ScriptedFailure ? error.message : String(error);
        const type =
          error instanceof ScriptedFailure
            ? (this.script.fail?.exceptionType ?? 'RuntimeError')
            : 'StandinError';
        record('execution_error', {
          ...node,
          exception_message: `${message}\n`,
          exception_type: type,
          traceback: ['  File "execution.py", line 1, in execute (protocol stand-in)\n'],
          current_inputs: literalInputs(workflow, current),
          current_outputs: executed,
        });
      }
      return entry(false);
    }
  }

  async #output(id: string, host: RunHost): Promise<Record<string, unknown> | undefined> {
    const node = this.workflow[id]!;
    const inputs = node.inputs ?? {};
    const prefix = String(inputs.filename_prefix ?? 'ComfyUI');
    switch (node.class_type) {
      case 'SaveImage':
      case 'PreviewImage': {
        const type = node.class_type === 'SaveImage' ? 'output' : 'temp';
        const name = type === 'output' ? prefix : `ComfyUI_temp_${randomLetters(5)}`;
        const images = await this.#images(id);
        const extension = this.script.file?.extension ?? 'png';
        const saved = images.map((bytes) =>
          host.save(type, ...split(name), extension, bytes, 'comfy'),
        );
        return { images: saved.map((file) => entryOf(file, type)) };
      }
      case 'SaveVideo': {
        const file = this.#video();
        const saved = host.save(
          'output',
          ...split(String(inputs.filename_prefix ?? 'video/ComfyUI')),
          file.extension,
          file.bytes,
          'comfy',
        );
        return { images: [entryOf(saved, 'output')], animated: [true] };
      }
      case 'VHS_VideoCombine': {
        const file = this.#video();
        const type = inputs.save_output === false ? 'temp' : 'output';
        const saved = host.save(type, ...split(prefix), file.extension, file.bytes, 'vhs');
        const { filename, subfolder } = entryOf(saved, type);
        const base = filename.replace(/\.[^.]+$/, '');
        const fullpath = `/comfyui/${type}/${subfolder === '' ? '' : `${subfolder}/`}${filename}`;
        return {
          gifs: [
            {
              filename,
              subfolder,
              type,
              format: inputs.format,
              frame_rate: inputs.frame_rate,
              workflow: `${base}.png`,
              fullpath,
            },
          ],
        };
      }
      default:
        return undefined;
    }
  }

  async #images(outputId: string): Promise<Buffer[]> {
    const latent = upstream(this.workflow, outputId).find(
      (id) => this.workflow[id]!.class_type === 'EmptyLatentImage',
    );
    const inputs = latent === undefined ? {} : (this.workflow[latent]!.inputs ?? {});
    const count = Number(inputs.batch_size ?? 1);
    if (this.script.file !== undefined)
      return Array.from({ length: count }, () => this.script.file!.bytes);
    const width = Number(inputs.width ?? 512);
    const height = Number(inputs.height ?? 512);
    const shade = this.item[0] % 256;
    const png = await sharp({
      create: { width, height, channels: 3, background: { r: shade, g: 96, b: 160 } },
    })
      .png()
      .toBuffer();
    return Array.from({ length: count }, () => png);
  }

  #video(): { bytes: Buffer; extension: string } {
    if (this.script.file === undefined)
      throw new Error('protocol stand-in: script a `file` for video outputs');
    return this.script.file;
  }
}

/** `ComfyUI` → ['', 'ComfyUI']; `video/ComfyUI` → ['video', 'ComfyUI'] (prefix folders become the subfolder). */
function split(prefix: string): [string, string] {
  const at = prefix.lastIndexOf('/');
  return at < 0 ? ['', prefix] : [prefix.slice(0, at), prefix.slice(at + 1)];
}

/** `sub/name.png` as a ui file entry. */
function entryOf(
  saved: string,
  type: string,
): { filename: string; subfolder: string; type: string } {
  const [subfolder, filename] = split(saved);
  return { filename, subfolder, type };
}

function literalInputs(workflow: Workflow, id: string): Record<string, string[]> {
  const inputs = Object.entries(workflow[id]?.inputs ?? {}).filter(
    ([, value]) => asLink(value) === undefined,
  );
  return Object.fromEntries(inputs.map(([name, value]) => [name, [String(value)]]));
}

function randomLetters(length: number): string {
  return Array.from({ length }, () =>
    String.fromCharCode(97 + Math.floor(Math.random() * 26)),
  ).join('');
}
