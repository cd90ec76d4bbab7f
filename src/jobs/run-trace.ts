import { contextFrom, recordSpan, type SpanOptions } from '../observability/tracing.ts';
import type { ClaimedTask } from '../store/task-queue.store.ts';
import type { Placement } from './placement.ts';

/**
 * Where a run's engine span goes: under its submission's trace, whichever process submitted
 * it (the context came with the task), with the task's ids. A first attempt also records its
 * wait in the queue there; a retry's wait would overlap the runs before it.
 */
export function runTrace(
  { task, content }: ClaimedTask,
  placement: Placement | undefined,
): SpanOptions {
  const parent = contextFrom(task.trace_context);
  const attributes = {
    'atelier.task_id': task.id,
    'atelier.content_id': content.id,
    'atelier.model_id': content.model_id,
    'atelier.attempt': task.attempts,
    ...(placement === undefined ? {} : { 'atelier.backend': placement.backend.id }),
  };
  if (task.attempts === 1 && task.claimed_at !== null) {
    recordSpan('atelier.queue.wait', {
      parent,
      start: task.created_at,
      end: task.claimed_at,
      attributes,
    });
  }
  return { parent, attributes };
}
