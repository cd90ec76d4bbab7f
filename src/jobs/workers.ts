import type { PoolBackend } from '../domain/backends.ts';
import { OutageLog } from '../observability/outage-log.ts';
import type { Logger } from '../shared/logger.ts';
import { BackendHealthService } from './backend-health.ts';
import { TaskRunner, type TaskRunnerOptions } from './task-runner.ts';
import { startWorkerChores, type WorkerChoresDeps } from './worker-chores.ts';

/** What a process's workers need from the core it runs in. */
export interface WorkersDeps
  extends Omit<TaskRunnerOptions, 'log' | 'concurrency' | 'outages' | 'health'>,
    Pick<WorkerChoresDeps, 'clock' | 'uploads' | 'webhooks' | 'audit'> {
  /** The backends probed, as configured now (a reload replaces them: `replace`). */
  backends: readonly PoolBackend[];
  /** Tells every node a backend was taken out of rotation or brought back. */
  backendsChanged(): Promise<void>;
  /** How long a stop lets running tasks finish before giving them back. */
  drainMs: number;
}

/** A process's workers: its task slots, its backends' probes and its chores. */
export interface Workers {
  readonly runner: TaskRunner;
  /** The probes, to be given a reloaded catalogue's backends. */
  readonly health: BackendHealthService;
  /** Stops the chores, drains the slots (for up to `drainMs`), then closes the outage log. */
  stop(): Promise<void>;
}

/** Starts `concurrency` task slots, the backends' probes and the chores in this process. */
export function startWorkers(d: WorkersDeps, log: Logger, concurrency: number): Workers {
  const outages = new OutageLog(log);
  const health = new BackendHealthService({
    db: d.db,
    log,
    engines: d.engines,
    backends: d.backends,
    changed: d.backendsChanged,
  });
  const runner = new TaskRunner({ ...d, log, concurrency, outages, health });
  runner.start();
  const chores = startWorkerChores({ ...d, log, outages, health });
  return {
    runner,
    health,
    async stop() {
      for (const chore of chores.reverse()) await chore.stop();
      await runner.stop(d.drainMs);
      outages.close();
    },
  };
}
