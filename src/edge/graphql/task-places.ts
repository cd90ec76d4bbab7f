import DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import type { TaskPlace } from '../../domain/queue-place.ts';
import type { TaskView } from '../../services/generation-views.ts';
import { type GraphqlContext, requireActor } from './context.ts';

const loaders = new WeakMap<
  GraphqlContext,
  WeakMap<object, DataLoader<string, TaskPlace | null>>
>();
const attemptLoaders = new WeakMap<GraphqlContext, DataLoader<string, number>>();

/**
 * Where a task stands (`Task.queuePosition` and the estimates), read for the unfinished tasks
 * of one response in batches, all estimated against one state (`ResultService.placeReader`):
 * two tasks of one answer never disagree about which starts first. A query's context lives for
 * its response; a subscription's lives as long as the subscription, and each update (its own
 * root value) is one response read afresh.
 */
export function taskPlace(
  task: TaskView,
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
): Promise<TaskPlace | null> | null {
  if (task.status === 'finished') return null;
  let responses = loaders.get(ctx);
  if (responses === undefined) {
    responses = new WeakMap();
    loaders.set(ctx, responses);
  }
  const response =
    typeof info.rootValue === 'object' && info.rootValue !== null ? info.rootValue : ctx;
  let loader = responses.get(response);
  if (loader === undefined) {
    const read = ctx.services.results.placeReader(requireActor(ctx));
    loader = new DataLoader(
      async (ids: readonly string[]) => {
        const places = await read(ids);
        return ids.map((id) => places.get(id) ?? null);
      },
      { cache: false },
    );
    responses.set(response, loader);
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
