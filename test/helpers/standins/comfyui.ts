import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type Clock, systemClock } from '../../../src/shared/clock.ts';
import { ComfyFiles } from './comfyui-files.ts';
import { validateWorkflow, type Workflow } from './comfyui-graph.ts';
import { nodeCatalogue } from './comfyui-nodes.ts';
import { ComfyRun, type ComfyScript, type HistoryEntry, type QueueItem } from './comfyui-run.ts';
import { ComfySockets } from './comfyui-sockets.ts';
import { type RecordedRequest, StandinServer, sendEmpty, sendJson } from './standin-server.ts';

/**
 * Protocol stand-in for a ComfyUI server (issue 17's `comfyui` engine), reproducing what
 * `../shared/protocols/comfyui.md` ("What a stand-in must reproduce") lists from ComfyUI's
 * `server.py` / `execution.py` / `main.py`: every route also under `/api`; 403 with an empty
 * body for an `Origin` whose host differs from `Host`; `POST /prompt` validated synchronously
 * (comfyui-graph.ts) answering `{prompt_id, number, node_errors}` or 400 `{error, node_errors}`,
 * honouring a client `prompt_id`, `number` and `front`; one prompt running at a time, lowest
 * `number` first; `GET /queue` 5-arrays; `GET /history[/{id}]` (`{}` until finished);
 * `POST /interrupt` (optional `prompt_id`) and `POST /queue {delete|clear}` answering 200 empty;
 * `GET /ws?clientId=` (comfyui-sockets.ts) with per-prompt events to the submitting client
 * only, `progress`/`execution_interrupted` to every socket when the prompt had no client_id,
 * and `executing {node: null}` last, after the history entry exists; `/view` and
 * `/upload/image` (comfyui-files.ts); `GET /system_stats` for readiness.
 * Not reproduced: `progress_state`, binary preview frames, `/object_info`, `/models`, `/free`,
 * `partial_execution_targets`, upload size limits.
 */
export class ComfyStandin {
  /** Recorded requests, `received` signals, faults and holds. */
  readonly http: StandinServer;
  readonly files = new ComfyFiles();
  /** The checkpoints `CheckpointLoaderSimple.ckpt_name` accepts. */
  readonly checkpoints: string[];
  /**
   * The ComfyUI version it answers as (`/system_stats`). Up to 0.3.56, `/interrupt` stops
   * whatever runs, whatever its body says, as those servers did.
   */
  version = '0.3.64';
  #clock: Clock;
  #catalogue: ReturnType<typeof nodeCatalogue>;
  #sockets = new ComfySockets(
    () => this.#remaining(),
    (clientId) => {
      const run = this.#running?.run;
      return run?.item[3].client_id === clientId ? run.currentNode : undefined;
    },
  );
  #scripts: ComfyScript[] = [];
  #pending: ComfyRun[] = [];
  #running: { run: ComfyRun; done: Promise<void> } | undefined;
  #history = new Map<string, HistoryEntry>();
  #runs: ComfyRun[] = [];
  #handedOut = 0;
  #runWatchers = new Set<() => void>();
  #finished = new Map<string, ((entry: HistoryEntry) => void)[]>();
  #number = 0;
  #mostAtOnce = 0;

  private constructor(options: { checkpoints?: string[]; clock?: Clock }) {
    this.checkpoints = options.checkpoints ?? ['sd_xl_base_1.0.safetensors'];
    this.#clock = options.clock ?? systemClock;
    this.#catalogue = nodeCatalogue(
      () => this.checkpoints,
      () => this.files.names('input'),
    );
    this.http = new StandinServer(
      (request, res) => this.#route(request, res),
      (req, socket, head) => this.#sockets.upgrade(req, socket, head, sameOrigin(req.headers)),
    );
  }

  /** Starts on a free port, or on `port` (a box that comes back where it was). */
  static async start(
    options: { checkpoints?: string[]; clock?: Clock; port?: number } = {},
  ): Promise<ComfyStandin> {
    const standin = new ComfyStandin(options);
    await standin.http.listen(options.port);
    return standin;
  }

  /**
   * The most prompts it held at once, queued and running: a caller that holds capacity for
   * it (a backend's `maxConcurrent`) never goes past that.
   */
  get mostAtOnce(): number {
    return this.#mostAtOnce;
  }

  get url(): string {
    return this.http.url;
  }

  /** Behaviour of the next prompts, in submission order; unscripted prompts just succeed. */
  script(...scripts: ComfyScript[]): void {
    this.#scripts.push(...scripts);
  }

  /**
   * Resolves with the run of the next accepted prompt that no earlier `nextRun` returned: the
   * first call gets the first prompt ever accepted, the second the second, and so on.
   */
  nextRun(): Promise<ComfyRun> {
    const index = this.#handedOut;
    this.#handedOut += 1;
    return this.#runWhere((runs) => runs[index], `prompt #${index + 1}`);
  }

  /** Resolves with the run of the prompt `promptId` once it is accepted. */
  runOf(promptId: string): Promise<ComfyRun> {
    return this.#runWhere((runs) => runs.find((run) => run.promptId === promptId), promptId);
  }

  #runWhere(pick: (runs: ComfyRun[]) => ComfyRun | undefined, what: string): Promise<ComfyRun> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const run = pick(this.#runs);
        if (run === undefined) return;
        clearTimeout(timer);
        this.#runWatchers.delete(check);
        resolve(run);
      };
      const timer = setTimeout(() => {
        this.#runWatchers.delete(check);
        reject(new Error(`${what} was never accepted`));
      }, 10_000); // 10 seconds: a prompt that never comes fails the test
      this.#runWatchers.add(check);
      check();
    });
  }

  /** Resolves with the prompt's history entry once it finished (success, error or interrupt). */
  finished(promptId: string): Promise<HistoryEntry> {
    const known = this.#history.get(promptId);
    if (known !== undefined) return Promise.resolve(known);
    return new Promise((resolve) => {
      this.#finished.set(promptId, [...(this.#finished.get(promptId) ?? []), resolve]);
    });
  }

  /**
   * Dies as a killed server does: every connection cut at once, nothing more said to anyone,
   * its queue gone with it.
   */
  async kill(): Promise<void> {
    this.#sockets.close();
    await this.close();
  }

  async close(): Promise<void> {
    this.#pending = [];
    const running = this.#running;
    running?.run.pace.release();
    running?.run.interrupt();
    await running?.done;
    this.#sockets.close();
    await this.http.close();
  }

  async #route(request: RecordedRequest, res: ServerResponse): Promise<void> {
    if (!sameOrigin(request.headers)) return sendEmpty(res, 403);
    const route = `${request.method} ${request.path.replace(/^\/api(?=\/)/, '')}`;
    const historyId = /^GET \/history\/(.+)$/.exec(route)?.[1];
    if (historyId !== undefined) {
      const id = decodeURIComponent(historyId);
      const entry = this.#history.get(id);
      return sendJson(res, 200, entry === undefined ? {} : { [id]: entry });
    }
    switch (route) {
      case 'POST /prompt':
        return this.#submit(request, res);
      case 'GET /prompt':
        return sendJson(res, 200, { exec_info: { queue_remaining: this.#remaining() } });
      case 'GET /queue':
        return sendJson(res, 200, {
          queue_running: this.#running === undefined ? [] : [this.#running.run.item],
          queue_pending: this.#pending.map((run) => run.item),
        });
      case 'POST /queue':
        return this.#editQueue(request, res);
      case 'POST /interrupt': {
        // Servers up to 0.3.56 read no body: they interrupt whatever runs.
        const wanted = targetsInterrupts(this.version)
          ? (request.json as { prompt_id?: unknown } | undefined)?.prompt_id
          : undefined;
        const run = this.#running?.run;
        if (run !== undefined && (wanted === undefined || wanted === run.promptId)) run.interrupt();
        return sendEmpty(res, 200);
      }
      case 'GET /history':
        return sendJson(res, 200, Object.fromEntries(this.#history));
      case 'GET /view':
        return this.files.view(request, res, this.http);
      case 'POST /upload/image':
        return this.files.upload(request, res);
      case 'GET /system_stats':
        return sendJson(res, 200, systemStats(this.version));
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('404: Not Found');
    }
  }

  #submit(request: RecordedRequest, res: ServerResponse): void {
    const body = request.json as Record<string, unknown> | undefined;
    if (body === undefined || typeof body !== 'object') {
      // aiohttp's answer when `request.json()` raises
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('500 Internal Server Error');
      return;
    }
    const prompt = body.prompt;
    if (typeof prompt !== 'object' || prompt === null || Array.isArray(prompt)) {
      const message = 'No prompt provided';
      const error = { type: 'no_prompt', message, details: message, extra_info: {} };
      sendJson(res, 400, { error, node_errors: {} });
      return;
    }
    const checked = validateWorkflow(prompt as Workflow, this.#catalogue);
    if (!checked.ok) {
      sendJson(res, 400, { error: checked.error, node_errors: checked.node_errors });
      return;
    }
    let number = typeof body.number === 'number' ? body.number : this.#number;
    if (typeof body.number !== 'number') {
      if (body.front === true) number = -number;
      this.#number += 1;
    }
    const prompt_id = typeof body.prompt_id === 'string' ? body.prompt_id : randomUUID();
    const extraData = { ...(body.extra_data as object | undefined) } as QueueItem[3];
    if (typeof body.client_id === 'string') extraData.client_id = body.client_id;
    const item: QueueItem = [number, prompt_id, prompt as Workflow, extraData, checked.outputs];
    const run = new ComfyRun(item, this.#scripts.shift() ?? {});
    this.#pending.push(run);
    this.#runs.push(run);
    this.#mostAtOnce = Math.max(this.#mostAtOnce, this.#remaining());
    for (const watcher of [...this.#runWatchers]) watcher();
    sendJson(res, 200, { prompt_id, number, node_errors: checked.node_errors });
    this.#queueChanged();
    this.#pump();
  }

  #editQueue(request: RecordedRequest, res: ServerResponse): void {
    const body = (request.json ?? {}) as { delete?: unknown; clear?: unknown };
    if (body.clear === true) this.#pending = [];
    if (Array.isArray(body.delete)) {
      this.#pending = this.#pending.filter(
        (run) => !(body.delete as unknown[]).includes(run.promptId),
      );
    }
    sendEmpty(res, 200);
    this.#queueChanged();
  }

  /** Starts the lowest-numbered pending prompt when nothing runs. */
  #pump(): void {
    if (this.#running !== undefined || this.#pending.length === 0) return;
    this.#pending.sort((a, b) => a.item[0] - b.item[0]);
    const run = this.#pending.shift()!;
    const client = run.item[3].client_id;
    const done = run
      .execute({
        send: (type, data, clientId, toAll) =>
          this.#send(type, data, clientId ?? (toAll ? null : undefined)),
        save: (...args) => this.files.save(...args),
        now: () => this.#clock.now().getTime(),
      })
      .then((entry) => {
        this.#history.set(run.promptId, entry);
        this.#running = undefined;
        this.#queueChanged();
        if (client !== undefined)
          this.#send('executing', { node: null, prompt_id: run.promptId }, client);
        for (const resolve of this.#finished.get(run.promptId) ?? []) resolve(entry);
        this.#finished.delete(run.promptId);
        this.#pump();
      });
    this.#running = { run, done };
    this.#queueChanged();
  }

  #remaining(): number {
    return this.#pending.length + (this.#running === undefined ? 0 : 1);
  }

  #queueChanged(): void {
    this.#send('status', { status: { exec_info: { queue_remaining: this.#remaining() } } }, null);
  }

  #send(type: string, data: Record<string, unknown>, to: string | null | undefined): void {
    this.#sockets.send(type, data, to);
  }
}

/** ComfyUI's loopback guard: an Origin whose host differs from Host is refused. */
function sameOrigin(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const origin = headers.origin;
  if (typeof origin !== 'string') return true;
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}

function systemStats(version: string): Record<string, unknown> {
  return {
    system: {
      os: 'posix',
      ram_total: 34_359_738_368,
      ram_free: 17_179_869_184,
      comfyui_version: version,
      python_version: '3.12.3',
      pytorch_version: '2.8.0+cu128',
      embedded_python: false,
      argv: ['main.py'],
    },
    devices: [
      {
        name: 'cuda:0 protocol stand-in',
        type: 'cuda',
        index: 0,
        vram_total: 25_769_803_776,
        vram_free: 24_000_000_000,
        torch_vram_total: 0,
        torch_vram_free: 0,
      },
    ],
  };
}

/** Whether this version reads `/interrupt`'s `prompt_id` (after v0.3.56, per the protocol note). */
function targetsInterrupts(version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  return major * 1_000_000 + minor * 1_000 + patch > 3_056;
}
