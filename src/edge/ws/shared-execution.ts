import {
  createSourceEventStream,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  print,
} from 'graphql';
import type { GraphqlContext } from '../graphql/context.ts';

type Update = ExecutionResult | Promise<ExecutionResult>;

/**
 * graphql's `subscribe`, except that one event delivered to many subscriptions is executed once
 * for all of those that would compute the same answer, instead of once each.
 *
 * Every subscriber of an account receives the same object for one task event (see
 * `TaskUpdates`); graphql executes the selection set against it per subscription, which for
 * 10,000 subscriptions was 10,000 identical executions (and, with `queuePosition` selected,
 * 10,000 reads of the queue) of one update. Here the result is remembered per event object,
 * keyed by what it depends on: the operation (its text, name and variables) and the caller
 * (the whole actor, so two accounts, or two credentials of one, never share an answer). Only
 * error-free results are shared: one with errors is executed again for each subscription, so
 * its errors carry that subscription's request id and are logged under it, as before. A
 * subscriber that falls behind receives the answer computed when the first one executed the
 * event (its queue place then, for instance): the update describes that moment for everyone.
 */
export function createSharedSubscribe() {
  /** Results by event object (gone with it), then by operation and caller. */
  const results = new WeakMap<object, Map<string, Update>>();

  const executeFor = (args: ExecutionArgs, key: string | null, payload: unknown): Update => {
    const own = () => execute({ ...args, rootValue: payload });
    if (key === null || typeof payload !== 'object' || payload === null) return own();
    let byOperation = results.get(payload);
    if (byOperation === undefined) {
      byOperation = new Map();
      results.set(payload, byOperation);
    }
    const shared = byOperation.get(key);
    if (shared === undefined) {
      const result = own();
      byOperation.set(key, result);
      return result;
    }
    if (shared instanceof Promise) {
      return shared.then(
        (result) => (result.errors === undefined ? result : own()),
        () => own(),
      );
    }
    return shared.errors === undefined ? shared : own();
  };

  return async function subscribe(
    args: ExecutionArgs,
  ): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
    const stream = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in stream)) return stream; // errors before the first event
    const key = sharingKey(args);
    return mapEvents(stream[Symbol.asyncIterator](), (payload) => executeFor(args, key, payload));
  };
}

/**
 * What a subscription's result depends on besides the event, or null when it may not share
 * (no authenticated actor: nothing to tell callers apart by).
 */
function sharingKey(args: ExecutionArgs): string | null {
  const ctx = args.contextValue as GraphqlContext | undefined;
  if (ctx?.auth.kind !== 'actor') return null;
  // The text as sent (graphql-ws parses with locations); printed only if it is missing.
  const text = args.document.loc?.source.body ?? print(args.document);
  return JSON.stringify([
    text,
    args.operationName ?? null,
    args.variableValues ?? null,
    ctx.auth.actor,
  ]);
}

/**
 * The source stream, each event mapped to its result. A plain iterator rather than an async
 * generator, as graphql's own: `return()` (the client completed, or the socket closed) reaches
 * the source at once, even while it waits for its next event.
 */
function mapEvents(
  source: AsyncIterator<unknown>,
  map: (payload: unknown) => Update,
): AsyncIterableIterator<ExecutionResult> {
  const settle = async (
    next: IteratorResult<unknown>,
  ): Promise<IteratorResult<ExecutionResult>> => {
    if (next.done) return { value: undefined, done: true };
    try {
      return { value: await map(next.value), done: false };
    } catch (error) {
      await source.return?.().catch(() => {});
      throw error;
    }
  };
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    next: async () => settle(await source.next()),
    return: async () => {
      await source.return?.();
      return { value: undefined, done: true };
    },
    throw: async (error?: unknown) => {
      if (source.throw !== undefined) return settle(await source.throw(error));
      await source.return?.().catch(() => {});
      throw error;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
