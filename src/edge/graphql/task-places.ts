import DataLoader from 'dataloader';
import type { TaskPlace } from '../../domain/queue-place.ts';
import type { TaskView } from '../../services/generation-views.ts';
import { type GraphqlContext, requireActor } from './context.ts';

const loaders = new WeakMap<GraphqlContext, DataLoader<string, TaskPlace | null>>();
const attemptLoaders = new WeakMap<GraphqlContext, DataLoader<string, number>>();

/**
 * Where a task stands (`Task.queuePosition` and the estimates), read for every unfinished task
 * of one response in one batch. Nothing is cached beyond the batch: a subscription's context
 * lives as long as the subscription, and each update must be read afresh.
 */
export function taskPlace(task: TaskView, ctx: GraphqlContext): Promise<TaskPlace | null> | null {
  if (task.status === 'finished') return null;
  let loader = loaders.get(ctx);
  if (loader === undefined) {
    const actor = requireActor(ctx);
    loader = new DataLoader(
      async (ids: readonly string[]) => {
        const places = await ctx.services.results.places(actor, ids);
        return ids.map((id) => places.get(id) ?? null);
      },
      { cache: false },
    );
    loaders.set(ctx, loader);
  }
  return loader.load(task.taskId);
}

/** How many times the task was started on a backend (`Task.attempts`), batched likewise. */
export function taskAttempts(task: TaskView, ctx: GraphqlContext): Promise<number> {
  let loader = attemptLoaders.get(ctx);
  if (loader === undefined) {
    const actor = requireActor(ctx);
    loader = new DataLoader(
      async (ids: readonly string[]) => {
        const counts = await ctx.services.results.attempts(actor, ids);
        return ids.map((id) => counts.get(id) ?? 0);
      },
      { cache: false },
    );
    attemptLoaders.set(ctx, loader);
  }
  return loader.load(task.taskId);
}
