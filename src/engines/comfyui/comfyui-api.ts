import { callProvider } from '../remote/provider-call.ts';
import { backendName, type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';
import { endpoint } from './comfyui-socket.ts';
import type { HistoryEntry, OutputFile } from './history-entry.ts';
import type { Workflow } from './workflow-template.ts';

/** Where a prompt is on the server. */
export type PromptState =
  | { readonly at: 'finished'; readonly entry: HistoryEntry }
  | { readonly at: 'running' | 'pending' | 'absent' };

/** The answer to `POST /prompt`: queued under an id, or refused by ComfyUI's validation. */
export type Submitted =
  | { readonly ok: true; readonly promptId: string }
  | { readonly ok: false; readonly message: string };

/** A ComfyUI server's HTTP routes, each through the remote kit's call (timeouts, retries). */
export class ComfyApi {
  readonly #deps: RemoteDeps;
  readonly #baseUrl: URL;
  readonly #backend: string;

  constructor(deps: RemoteDeps, baseUrl: URL) {
    this.#deps = deps;
    this.#baseUrl = baseUrl;
    this.#backend = backendName('comfyui', baseUrl.href);
  }

  /**
   * Queues a prompt under the client's own id (ComfyUI after v0.3.44 keeps it; older servers
   * answer with an id of their own). One attempt only: ComfyUI does not check that an id is
   * unique, so a blind retry could queue the prompt twice. A lost answer is an error; the
   * task's next attempt looks for the prompt before submitting again.
   */
  async submit(workflow: Workflow, promptId: string, clientId: string, signal: AbortSignal) {
    const body = { prompt: workflow, prompt_id: promptId, client_id: clientId };
    const response = await this.#call('prompt', signal, { method: 'POST', ...json(body) }, 1);
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.ok && typeof answer.prompt_id === 'string') {
      return { ok: true, promptId: answer.prompt_id } satisfies Submitted;
    }
    if (response.status === 400) return { ok: false, message: refusal(answer) } satisfies Submitted;
    throw new Error(`ComfyUI answered POST /prompt with HTTP ${response.status}`);
  }

  /** Finished (with its history entry), still queued or running, or unknown to the server. */
  async locate(promptId: string, signal: AbortSignal): Promise<PromptState> {
    const first = await this.#history(promptId, signal);
    if (first !== undefined) return { at: 'finished', entry: first };
    const queue = (await this.#json('queue', signal)) as Record<string, unknown>;
    const has = (items: unknown) =>
      Array.isArray(items) && items.some((item) => Array.isArray(item) && item[1] === promptId);
    if (has(queue.queue_running)) return { at: 'running' };
    if (has(queue.queue_pending)) return { at: 'pending' };
    // It may have finished between the two reads: history is written as it leaves the queue.
    const second = await this.#history(promptId, signal);
    return second === undefined ? { at: 'absent' } : { at: 'finished', entry: second };
  }

  /**
   * Stops the prompt if it runs (with its id: never someone else's) or drops it if queued.
   * Only a server newer than 0.3.56 reads the id of `/interrupt`; an older one interrupts
   * whatever runs, possibly another client's prompt, so it is never sent one: there the running
   * prompt goes on to its end.
   */
  async stop(promptId: string, signal: AbortSignal): Promise<void> {
    for (let round = 0; round < 3; round += 1) {
      const state = await this.locate(promptId, signal);
      if (state.at === 'running') {
        if (!targetsInterrupts(await this.version(signal))) return;
        await this.#call('interrupt', signal, { method: 'POST', ...json({ prompt_id: promptId }) });
        return;
      }
      if (state.at !== 'pending') return;
      await this.#call('queue', signal, { method: 'POST', ...json({ delete: [promptId] }) });
      // It may have started between the read and the delete: look again.
    }
  }

  /** The server's `comfyui_version` from `/system_stats`; null when it does not say. */
  async version(signal: AbortSignal): Promise<string | null> {
    const stats = (await this.#json('system_stats', signal)) as {
      system?: Record<string, unknown>;
    };
    const version = stats.system?.comfyui_version;
    return typeof version === 'string' ? version : null;
  }

  /** Uploads an input image under `name` (replacing a file of that name); its name on the server. */
  async upload(name: string, bytes: Buffer, signal: AbortSignal): Promise<string> {
    const form = new FormData();
    form.set('image', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), name);
    form.set('type', 'input');
    form.set('overwrite', 'true');
    const response = await this.#call('upload/image', signal, { method: 'POST', body: form });
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof answer.name !== 'string') {
      throw new Error(`ComfyUI answered POST /upload/image with HTTP ${response.status}`);
    }
    const subfolder = typeof answer.subfolder === 'string' ? answer.subfolder : '';
    return subfolder === '' ? answer.name : `${subfolder}/${answer.name}`;
  }

  /** The bytes of an output file, from `/view` on the server's own origin, at most `maxBytes`. */
  async view(file: OutputFile, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
    const url = endpoint(this.#baseUrl, 'view');
    url.search = new URLSearchParams({
      filename: file.filename,
      subfolder: file.subfolder,
      type: file.type,
    }).toString();
    const providerOrigin = this.#baseUrl.origin;
    try {
      return (await this.#deps.fetchOutput(url.href, { providerOrigin, maxBytes, signal })).bytes;
    } catch (error) {
      if (!(error instanceof RemoteOutputError)) throw error;
      throw new RemoteOutputError(`ComfyUI's output ${file.filename}: ${error.message}`);
    }
  }

  async #history(promptId: string, signal: AbortSignal): Promise<HistoryEntry | undefined> {
    const all = (await this.#json(`history/${encodeURIComponent(promptId)}`, signal)) as Record<
      string,
      HistoryEntry
    >;
    return all[promptId];
  }

  async #json(path: string, signal: AbortSignal): Promise<unknown> {
    const response = await this.#call(path, signal, { method: 'GET' });
    if (!response.ok) throw new Error(`ComfyUI answered GET /${path} with HTTP ${response.status}`);
    const body: unknown = await response.json();
    if (typeof body !== 'object' || body === null) throw new Error(`GET /${path}: not an object`);
    return body;
  }

  async #call(path: string, signal: AbortSignal, init: RequestInit, maxAttempts?: number) {
    const url = endpoint(this.#baseUrl, path).href;
    return callProvider(this.#deps, {
      backend: this.#backend,
      url,
      init,
      signal,
      callTimeoutMs: 30_000, // 30 seconds: every route but /view answers at once
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
    });
  }
}

/**
 * Whether a ComfyUI version reads `/interrupt`'s `prompt_id`: newer than 0.3.56 (September
 * 2025). An unknown or unreadable version is taken as older, the side that interrupts nobody.
 */
export function targetsInterrupts(version: string | null): boolean {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/
    .exec(version ?? '')
    ?.slice(1)
    .map(Number);
  if (parts === undefined) return false;
  const [major, minor, patch] = parts as [number, number, number];
  return major > 0 || minor > 3 || (minor === 3 && patch > 56);
}

function json(body: unknown): { headers: Record<string, string>; body: string } {
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/**
 * ComfyUI's validation answer `{error: {message, details}, node_errors}` for the log. The cause
 * is often in `node_errors` alone: an output refused because a node upstream failed (a
 * checkpoint not on disk) leaves `details` empty (execution.py, validate_prompt). So every
 * node is named, with its class and each error's message and details.
 */
export function refusal(answer: Record<string, unknown>): string {
  const error = (answer.error ?? {}) as { message?: unknown; details?: unknown };
  const message = typeof error.message === 'string' ? error.message : 'invalid prompt';
  const details = typeof error.details === 'string' && error.details !== '' ? error.details : '';
  const nodes = Object.entries((answer.node_errors ?? {}) as Record<string, unknown>).map(
    ([id, entry]) => {
      const { class_type, errors } = (entry ?? {}) as { class_type?: unknown; errors?: unknown };
      const said = (Array.isArray(errors) ? errors : []).map((e) => {
        const { message: m, details: d } = (e ?? {}) as { message?: unknown; details?: unknown };
        return [m, d].filter((part) => typeof part === 'string' && part !== '').join(': ');
      });
      const kind = typeof class_type === 'string' ? ` (${class_type})` : '';
      return `node ${id}${kind}: ${said.join('; ') || 'refused'}`;
    },
  );
  return [
    `ComfyUI refused the workflow: ${message}${details === '' ? '' : ` (${details})`}`,
    ...nodes,
  ].join('; ');
}
