import { Worker } from 'node:worker_threads';
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
 * One warm eSpeak worker thread and a first-come queue of jobs for it (eSpeak is
 * single-threaded and keeps its voice settings between calls, so jobs never overlap).
 *
 * eSpeak runs synchronously inside the worker and cannot be interrupted, so aborting the job
 * that is running terminates the worker: the job rejects at once with the signal's reason and
 * the next job starts a fresh worker (about a quarter of a second). Aborting a queued job only
 * takes it out of the queue. A worker whose eSpeak threw mid-call is replaced the same way,
 * since eSpeak's state may be half-updated. While idle the worker is unref'd, so it never keeps
 * the process alive; while a job runs it is ref'd, so the process waits for the answer.
 */
export class EspeakWorkerHost {
  readonly #script: URL;
  #worker: Worker | undefined;
  #running: Pending | undefined;
  readonly #queue: Pending[] = [];
  #nextId = 1;

  constructor(script: URL) {
    this.#script = script;
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
    const worker = this.#worker;
    this.#worker = undefined;
    const stopped = new Error('eSpeak worker closed');
    for (const pending of [...(this.#running ? [this.#running] : []), ...this.#queue]) {
      pending.detach();
      pending.reject(stopped);
    }
    this.#running = undefined;
    this.#queue.length = 0;
    await worker?.terminate();
  }

  #next(): void {
    if (this.#running !== undefined) return;
    const pending = this.#queue.shift();
    if (pending === undefined) {
      this.#worker?.unref();
      return;
    }
    this.#running = pending;
    const worker = this.#ensureWorker();
    worker.ref();
    worker.postMessage({ ...pending.job, id: pending.id });
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(this.#script);
    worker.on('message', (reply: WorkerReply) => {
      const pending = this.#running;
      if (worker !== this.#worker || pending === undefined || reply.id !== pending.id) return;
      if (reply.kind === 'error' && reply.retire) {
        this.#worker = undefined;
        worker.terminate().catch(() => {});
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

  #abort(pending: Pending): void {
    if (pending === this.#running) {
      const worker = this.#worker;
      this.#worker = undefined;
      // Settled first: the job rejects now, not when the thread has finished stopping.
      this.#settle(pending);
      pending.reject(pending.signal?.reason);
      worker?.terminate().catch(() => {});
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
