import type { EngineResult } from '../engines/engine.ts';
import type { Logger } from '../shared/logger.ts';
import { type AttemptRecord, recordAttempt } from '../store/backend.store.ts';
import type { Db } from '../store/database.ts';
import type { ClaimedTask } from '../store/task-queue.store.ts';
import type { Placement } from './placement.ts';

type Outcome = AttemptRecord['outcome'];

/** How one run ended, for the backend's history: built to go with a finish, or written alone. */
export interface AttemptRecords {
  /** This run's record; undefined for a run that holds no slot on a recorded backend. */
  of(
    outcome: Outcome,
    detail?: string | null,
    providerStatus?: number | null,
  ): AttemptRecord | undefined;
  /** Writes this run's record now; a failure to is logged (it is the operator's history). */
  write(outcome: Outcome, detail?: string | null, providerStatus?: number | null): Promise<void>;
}

export function attemptRecords(
  db: Db,
  log: Logger,
  task: ClaimedTask['task'],
  placement: Placement | undefined,
): AttemptRecords {
  const of: AttemptRecords['of'] = (outcome, detail = null, providerStatus = null) =>
    placement?.recorded === true && task.claimed_at !== null
      ? {
          taskId: task.id,
          attempt: task.attempts,
          backendId: placement.backend.id,
          startedAt: task.claimed_at,
          outcome,
          detail,
          providerStatus,
        }
      : undefined;
  return {
    of,
    async write(outcome, detail, providerStatus) {
      const record = of(outcome, detail, providerStatus);
      if (record === undefined) return;
      try {
        await recordAttempt(db, record);
      } catch (error) {
        log.warn({ err: error, taskId: record.taskId }, 'task attempt not recorded');
      }
    },
  };
}

/** What a run's record says of its result: a failure's detail and the provider's status. */
export function failureOf(
  result: EngineResult,
): [detail: string | null, providerStatus: number | null] {
  return result.ok
    ? [null, null]
    : [result.detail ?? result.message, result.providerStatus ?? null];
}
