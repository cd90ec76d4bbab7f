import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What a worker process answers: any message naming the request it answers. */
export interface WorkerAnswer {
  readonly id: number;
  /** The worker may be left in a broken state: stop it, and start a new one for later jobs. */
  readonly retire?: boolean;
}

interface Pending<J, A> {
  readonly id: number;
  readonly job: J;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (answer: A) => void;
  readonly reject: (reason: unknown) => void;
  /** Removes the abort listener; called once the job is settled either way. */
  detach: () => void;
}

/**
 * A worker process for work that should not live in the server's own memory, started at the
 * first job and stopped once idle for `idleMs`, with a first-come queue of jobs for it and at
 * most `concurrency` of them sent at once (1 for a worker that runs one job at a time).
 *
 * Why a process and not a worker thread: memory a thread used stays the server's after it ends
 * (glibc keeps the freed heap for reuse), so an idle server that had used it once kept it for
 * good (issue 34); a process that exits gives all of it back. eSpeak (80–130 MiB of voice
 * data, code and heap) and sharp's libvips (its code, thread arenas and heap fragments) run in
 * one each.
 *
 * A job is sent as `{ ...job, id }`, and the worker's message with that `id` is its answer,
 * which `run` resolves with whatever it says (failures the worker reports are the caller's to
 * read). Aborting a job that was sent kills the worker, as it may be stuck in synchronous code:
 * the job rejects at once with the signal's reason, the other jobs sent to that worker reject
 * as stopped, and the next job starts a fresh worker. Aborting a queued job only takes it out
 * of the queue. An answer with `retire: true` stops the worker the same way once it is
 * delivered. While idle the worker is unref'd, so it never keeps the server alive; while a job
 * is out it is ref'd, so the server waits for the answer.
 */
export class WorkerProcess<J extends object, A extends WorkerAnswer> {
  readonly #script: URL;
  readonly #name: string;
  readonly #idleMs: number;
  readonly #concurrency: number;
  #worker: ChildProcess | undefined;
  /** The jobs sent to the current worker and not yet answered, by id. */
  readonly #sent = new Map<number, Pending<J, A>>();
  readonly #queue: Pending<J, A>[] = [];
  #nextId = 1;
  #idleTimer: NodeJS.Timeout | undefined;

  /** `name` says whose worker it is in errors ("eSpeak worker exited with code 3"). */
  constructor(script: URL, options: { name: string; idleMs: number; concurrency?: number }) {
    this.#script = script;
    this.#name = options.name;
    this.#idleMs = options.idleMs;
    this.#concurrency = options.concurrency ?? 1;
  }

  /** Runs `job` when the worker has room; rejects with `signal.reason` if aborted first. */
  run(job: J, signal?: AbortSignal): Promise<A> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<A>((resolve, reject) => {
      const pending: Pending<J, A> = {
        id: this.#nextId++,
        job,
        signal,
        resolve,
        reject,
        detach: () => {},
      };
      if (signal !== undefined) {
        const onAbort = () => this.#abort(pending);
        signal.addEventListener('abort', onAbort, { once: true });
        pending.detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.#queue.push(pending);
      this.#next();
    });
  }

  /** Stops the worker; queued and sent jobs reject. Idempotent. */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const stopped = new Error(`${this.#name} closed`);
    for (const pending of this.#queue.splice(0)) {
      pending.detach();
      pending.reject(stopped);
    }
    await this.#stop(stopped);
  }

  #next(): void {
    while (this.#sent.size < this.#concurrency) {
      const pending = this.#queue.shift();
      if (pending === undefined) break;
      clearTimeout(this.#idleTimer);
      const worker = this.#ensureWorker();
      holdOpen(worker, true);
      this.#sent.set(pending.id, pending);
      worker.send({ ...pending.job, id: pending.id });
    }
    if (this.#sent.size === 0 && this.#worker !== undefined) {
      holdOpen(this.#worker, false);
      this.#retireWhenIdle();
    }
  }

  #ensureWorker(): ChildProcess {
    if (this.#worker !== undefined) return this.#worker;
    const worker = startWorker(this.#script);
    worker.on('message', (answer: A) => {
      const pending = this.#sent.get(answer.id);
      if (worker !== this.#worker || pending === undefined) return;
      this.#sent.delete(answer.id);
      pending.detach();
      pending.resolve(answer);
      if (answer.retire) void this.#stop(new Error(`${this.#name} stopped after a failure`));
      queueMicrotask(() => this.#next());
    });
    // A crash (out of memory, a bug in the worker) fails the jobs it had; the next job gets a
    // new worker.
    const fail = (reason: unknown) => {
      if (worker !== this.#worker) return;
      this.#worker = undefined;
      this.#failSent(reason);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`${this.#name} exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  /** Stops the worker unless a job comes within `idleMs`. */
  #retireWhenIdle(): void {
    const worker = this.#worker;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      if (this.#worker !== worker || this.#sent.size > 0) return;
      void this.#stop(new Error(`${this.#name} stopped when idle`));
    }, this.#idleMs);
    this.#idleTimer.unref();
  }

  #abort(pending: Pending<J, A>): void {
    if (this.#sent.has(pending.id)) {
      // Settled first: the job rejects now, not when the worker has finished stopping.
      this.#sent.delete(pending.id);
      pending.detach();
      pending.reject(pending.signal?.reason);
      void this.#stop(new Error(`${this.#name} stopped to abort another job`));
      return;
    }
    const index = this.#queue.indexOf(pending);
    if (index !== -1) this.#queue.splice(index, 1);
    pending.detach();
    pending.reject(pending.signal?.reason);
  }

  /** Kills the worker, if any: the jobs sent to it reject with `reason`; the queue moves on. */
  async #stop(reason: Error): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failSent(reason);
    await stopWorker(worker);
  }

  #failSent(reason: unknown): void {
    const sent = [...this.#sent.values()];
    this.#sent.clear();
    for (const pending of sent) {
      pending.detach();
      pending.reject(reason);
    }
    if (this.#queue.length > 0) queueMicrotask(() => this.#next());
  }
}

/**
 * A worker process running `script` (a file URL), its messages in V8's serialisation (buffers
 * and typed arrays arrive as such). Node's flags of this process are not passed on (under
 * `node --test` they would start a test runner); its environment is, as fork does by default.
 */
function startWorker(script: URL): ChildProcess {
  return fork(fileURLToPath(script), [], {
    execArgv: [],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

/** Whether the worker (its process and its message channel) keeps this process running. */
function holdOpen(worker: ChildProcess, hold: boolean): void {
  if (hold) {
    worker.ref();
    worker.channel?.ref();
  } else {
    worker.unref();
    worker.channel?.unref();
  }
}

/** Kills the worker and resolves once it has exited. */
async function stopWorker(worker: ChildProcess | undefined): Promise<void> {
  if (worker === undefined || worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.ref(); // an idle worker is unref'd: the caller may be waiting for this exit
  worker.kill('SIGKILL');
  await exited;
}
