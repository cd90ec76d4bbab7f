import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ReplyTo, WorkerJob, WorkerReply } from './espeak-protocol.ts';

interface Pending {
  readonly id: number;
  readonly job: WorkerJob;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (reply: WorkerReply) => void;
  readonly reject: (reason: unknown) => void;
  /** Removes the abort listener; called once the job is settled either way. */
  detach: () => void;
}

/**
 * One warm eSpeak worker process and a first-come queue of jobs for it (eSpeak is
 * single-threaded and keeps its voice settings between calls, so jobs never overlap).
 *
 * eSpeak runs synchronously inside the worker and cannot be interrupted, so aborting the job
 * that is running kills the worker: the job rejects at once with the signal's reason and the
 * next job starts a fresh worker (a few tenths of a second). Aborting a queued job only takes
 * it out of the queue. A worker whose eSpeak threw mid-call is replaced the same way, since
 * eSpeak's state may be half-updated. While idle the worker is unref'd, so it never keeps the
 * server alive; while a job runs it is ref'd, so the server waits for the answer.
 *
 * A process, not a worker thread, and stopped once idle for `idleMs`: eSpeak holds its 24 MB
 * of voice data, its compiled code and heap, 80–130 MiB. In a thread of the server that memory
 * stayed the server's after the thread ended (glibc keeps the freed heap for reuse), so an
 * idle server that had spoken once kept it for good (issue 34); a process gives it all back.
 */
export class EspeakWorkerHost {
  readonly #script: URL;
  #worker: ChildProcess | undefined;
  #running: Pending | undefined;
  readonly #queue: Pending[] = [];
  #nextId = 1;
  readonly #idleMs: number;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(script: URL, options: { idleMs: number }) {
    this.#script = script;
    this.#idleMs = options.idleMs;
  }

  /** Runs `job` when the worker is free; rejects with `signal.reason` if aborted first. */
  run<J extends WorkerJob>(job: J, signal?: AbortSignal): Promise<ReplyTo<J['kind']>> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<WorkerReply>((resolve, reject) => {
      const pending: Pending = {
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
    }).then((reply) => {
      if (reply.kind === 'error') throw new Error(reply.message);
      if (reply.kind !== job.kind) throw new Error(`eSpeak worker answered ${reply.kind}`);
      return reply as ReplyTo<J['kind']>;
    });
  }

  /** Stops the worker; queued and running jobs reject. Idempotent. */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const worker = this.#worker;
    this.#worker = undefined;
    const stopped = new Error('eSpeak worker closed');
    for (const pending of [...(this.#running ? [this.#running] : []), ...this.#queue]) {
      pending.detach();
      pending.reject(stopped);
    }
    this.#running = undefined;
    this.#queue.length = 0;
    await stopWorker(worker);
  }

  #next(): void {
    if (this.#running !== undefined) return;
    const pending = this.#queue.shift();
    if (pending === undefined) {
      if (this.#worker !== undefined) holdOpen(this.#worker, false);
      this.#retireWhenIdle();
      return;
    }
    clearTimeout(this.#idleTimer);
    this.#running = pending;
    const worker = this.#ensureWorker();
    holdOpen(worker, true);
    worker.send({ ...pending.job, id: pending.id });
  }

  #ensureWorker(): ChildProcess {
    if (this.#worker !== undefined) return this.#worker;
    const worker = startWorker(this.#script);
    worker.on('message', (reply: WorkerReply) => {
      const pending = this.#running;
      if (worker !== this.#worker || pending === undefined || reply.id !== pending.id) return;
      if (reply.kind === 'error' && reply.retire) {
        this.#worker = undefined;
        void stopWorker(worker);
      }
      this.#settle(pending);
      pending.resolve(reply);
    });
    // A crash (out of memory, a bug in the worker) fails the running job only; the next job
    // gets a new worker.
    const fail = (reason: unknown) => {
      if (worker !== this.#worker) return;
      this.#worker = undefined;
      const pending = this.#running;
      if (pending === undefined) return;
      this.#settle(pending);
      pending.reject(reason);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`eSpeak worker exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  /** Stops the worker unless a job comes within `idleMs`. */
  #retireWhenIdle(): void {
    const worker = this.#worker;
    if (worker === undefined) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      if (this.#worker !== worker || this.#running !== undefined) return;
      this.#worker = undefined;
      void stopWorker(worker);
    }, this.#idleMs);
    this.#idleTimer.unref();
  }

  #abort(pending: Pending): void {
    if (pending === this.#running) {
      const worker = this.#worker;
      this.#worker = undefined;
      // Settled first: the job rejects now, not when the thread has finished stopping.
      this.#settle(pending);
      pending.reject(pending.signal?.reason);
      void stopWorker(worker);
      return;
    }
    const index = this.#queue.indexOf(pending);
    if (index !== -1) this.#queue.splice(index, 1);
    pending.detach();
    pending.reject(pending.signal?.reason);
  }

  /** Marks the running job done and starts the next one. */
  #settle(pending: Pending): void {
    pending.detach();
    this.#running = undefined;
    queueMicrotask(() => this.#next());
  }
}

/**
 * A worker process running `script` (a file URL), its messages in V8's serialisation (typed
 * arrays arrive as typed arrays). Node's flags of this process are not passed on (under
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
