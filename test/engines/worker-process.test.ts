import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { WorkerProcess } from '../../src/shared/worker-process.ts';

interface Answer {
  readonly id: number;
  readonly retire?: boolean;
  /** The answering worker's process id. */
  readonly pid: number;
}

describe('WorkerProcess', () => {
  // Each script is a worker process's file.
  const folder = mkdtempSync(path.join(tmpdir(), 'atelier-worker-process-'));
  after(() => rmSync(folder, { recursive: true, force: true }));
  let scripts = 0;
  const script = (source: string) => {
    const file = path.join(folder, `worker-${++scripts}.mjs`);
    writeFileSync(file, source);
    return pathToFileURL(file);
  };
  /** Answers every job at once with its process id. */
  const answerWithPid = (retire: boolean) =>
    script(`process.on('message', ({ id }) =>
      process.send({ id, pid: process.pid, retire: ${retire} }));`);
  /** Holds jobs until it has `n`, then answers them all. */
  const answerInGroupsOf = (n: number) =>
    script(`const held = [];
      process.on('message', ({ id }) => {
        held.push(id);
        if (held.length === ${n}) for (const id of held.splice(0)) process.send({ id, pid: process.pid });
      });`);
  const job = { kind: 'any' };
  /** A host of `script`'s workers, kept a minute when idle unless said otherwise. */
  const host = (script: URL, options: { idleMs?: number; concurrency?: number } = {}) =>
    new WorkerProcess<object, Answer>(script, { name: 'test worker', idleMs: 60_000, ...options });

  it('fails the jobs of a worker that dies, and starts a new worker for the next', async () => {
    const worker = host(script('process.exit(3)'));
    await assert.rejects(worker.run(job), /test worker exited with code 3/);
    await assert.rejects(worker.run(job), /test worker exited with code 3/);
    await worker.close();
  });

  it('replaces a worker whose answer says to retire it', async () => {
    const worker = host(answerWithPid(true));
    const first = await worker.run(job);
    const second = await worker.run(job);
    assert.notEqual(first.pid, second.pid);
    await worker.close();
  });

  it('stops a worker left idle, and starts a new one for the next job', async () => {
    const worker = host(answerWithPid(false), { idleMs: 50 });
    const first = await worker.run(job);
    assert.equal((await worker.run(job)).pid, first.pid, 'busy: the same worker');
    await exited(first.pid);
    assert.notEqual((await worker.run(job)).pid, first.pid, 'idle past idleMs: a new worker');
    await worker.close();
  });

  it('sends up to `concurrency` jobs at once, and queues the rest', async () => {
    const worker = host(answerInGroupsOf(2), { concurrency: 2 });
    // The worker answers only once it holds two jobs: four jobs finish in two groups.
    const answers = await Promise.all([1, 2, 3, 4].map(() => worker.run(job)));
    assert.equal(new Set(answers.map((a) => a.pid)).size, 1, 'one worker');
    await worker.close();
  });

  it('aborting a sent job stops its worker: the job rejects with the reason, the others it had as stopped', async () => {
    const worker = host(answerInGroupsOf(2), { concurrency: 2 });
    const abort = new AbortController();
    const aborted = worker.run(job, abort.signal);
    const other = worker.run(job);
    const queued = worker.run(job);
    abort.abort(new Error('never mind'));
    await assert.rejects(aborted, /never mind/);
    await assert.rejects(other, /test worker stopped to abort another job/);
    // The queued job went to a new worker, which holds it until one more comes.
    const [a, b] = await Promise.all([queued, worker.run(job)]);
    assert.equal(a.pid, b.pid);
    await worker.close();
  });

  it('rejects queued and sent jobs when closed', async () => {
    const worker = host(answerInGroupsOf(5));
    const sent = worker.run(job);
    const queued = worker.run(job);
    const rejected = [
      assert.rejects(sent, /test worker closed/),
      assert.rejects(queued, /test worker closed/),
    ];
    await worker.close();
    await Promise.all(rejected);
  });
});

/** Resolves once process `pid` no longer exists. */
async function exited(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (alive()) await new Promise((resolve) => setTimeout(resolve, 10));
}
