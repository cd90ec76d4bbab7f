import type { TaskCheckpoint } from '../engines/engine.ts';
import type { Db } from '../store/database.ts';
import { type ClaimedTask, writeCheckpoint } from '../store/task-queue.store.ts';

/**
 * The task's checkpoint as claimed, when it names a job on the backend this run holds (a job
 * on another backend is not this one's to resume); writes are fenced by this claim's lease.
 */
export function leaseCheckpoint(db: Db, task: ClaimedTask['task']): TaskCheckpoint {
  const mine =
    task.checkpoint_backend_id === null || task.checkpoint_backend_id === task.backend_id;
  return {
    saved: mine ? task.engine_checkpoint : null,
    save: async (checkpoint) => {
      if (!(await writeCheckpoint(db, task.id, task.lease_token, checkpoint))) {
        throw new Error(`task ${task.id} is no longer held by this worker`);
      }
    },
  };
}
