import { kindModules } from '../../../domain/kinds/kinds.ts';
import type { SignedUrl } from '../../../domain/media.ts';
import type { CostEstimate, Submission } from '../../../services/generation.service.ts';
import type { ContentView, MediaView, TaskView } from '../../../services/generation-views.ts';
import type { Services } from '../../services.ts';
import type { Builder } from '../builder.ts';
import { type GraphqlContext, optionalActor, requireActor } from '../context.ts';
import { taskAttempts, taskPlace } from '../task-places.ts';
import { connectionRef } from './common.schema.ts';
import { kindInputType } from './kind-input.ts';
import type { SharedTypes } from './shared-types.schema.ts';

/**
 * Root fields that create a charged generation. Their errors carry `extensions.charged`:
 * false on the field itself (nothing was created), true below it (the submission exists).
 */
export const generationMutationFields: ReadonlySet<string> = new Set(
  kindModules.map((kind) => kind.names.mutation),
);

export function addGenerationSchema(builder: Builder, types: SharedTypes): void {
  const DownloadUrlRef = builder.objectRef<SignedUrl>('DownloadUrl').implement({
    fields: (t) => ({
      mediaId: t.exposeID('mediaId'),
      url: t.exposeString('url'),
      expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    }),
  });

  const MediaRef = builder.objectRef<MediaView>('Media').implement({
    fields: (t) => ({
      mediaId: t.exposeID('mediaId'),
      kind: t.field({ type: types.MediaKind, resolve: (m) => m.kind }),
      mimeType: t.exposeString('mimeType'),
      bytes: t.exposeInt('bytes'),
      width: t.exposeInt('width', { nullable: true }),
      height: t.exposeInt('height', { nullable: true }),
      durationMs: t.exposeInt('durationMs', { nullable: true }),
      download: t.field({
        type: DownloadUrlRef,
        description: 'A fresh signed URL at every read.',
        resolve: (m) => m.download,
      }),
    }),
  });

  const TaskRef = builder.objectRef<TaskView>('Task').implement({
    fields: (t) => ({
      taskId: t.exposeID('taskId'),
      contentId: t.exposeID('contentId'),
      status: t.field({ type: types.TaskStatus, resolve: (task) => task.status }),
      finishCode: t.exposeInt('finishCode', {
        nullable: true,
        description: 'Null until finished. 0 = success; see the error catalogue for the others.',
      }),
      finishMessage: t.exposeString('finishMessage', { nullable: true }),
      progress: t.exposeFloat('progress', { nullable: true, description: '0..1' }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
      finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
      waitingReason: t.string({
        nullable: true,
        description:
          'Why a queued task is not running yet beyond waiting its turn: "account_concurrency_limit" while the account already runs as many tasks as it may at once (ACCOUNT_MAX_RUNNING_TASKS). Null otherwise.',
        resolve: (task, _args, ctx) => ctx.services.results.waitingReason(requireActor(ctx), task),
      }),
      attempts: t.int({
        description:
          'How many times it was started on a backend: more than one when its backend failed before taking it (failover) or its worker was lost. It is charged once whatever the count.',
        resolve: (task, _args, ctx) => taskAttempts(task, ctx),
      }),
      queuePosition: t.int({
        nullable: true,
        description:
          "While queued: how many tasks of its model's pool start before it (their order is fair between accounts, so a later task of another account may start first). Null once it runs.",
        resolve: async (task, _args, ctx, info) =>
          (await taskPlace(task, ctx, info))?.queuePosition ?? null,
      }),
      estimatedStartAt: t.field({
        type: 'DateTime',
        nullable: true,
        description:
          "When it should start: from the tasks ahead, the pool's free slots and its backends' recent run times. Once it runs, when it started on its backend. Null when Atelier cannot tell (no runs recorded yet, or no backend in rotation) and once finished.",
        resolve: async (task, _args, ctx, info) =>
          (await taskPlace(task, ctx, info))?.estimatedStartAt ?? null,
      }),
      estimatedFinishAt: t.field({
        type: 'DateTime',
        nullable: true,
        description:
          "When it should finish, its start plus the mean of its backend's recent successful runs (never earlier than now). Null when Atelier cannot tell, and once finished (see finishedAt).",
        resolve: async (task, _args, ctx, info) =>
          (await taskPlace(task, ctx, info))?.estimatedFinishAt ?? null,
      }),
      cursor: t.string({
        nullable: true,
        description:
          "On an update from taskUpdated or myTaskUpdates: its place in the account's task events. Subscribe again with it as `after` to receive what happened since, then live. Kept 24 hours. Null elsewhere.",
        resolve: (task) => task.cursor ?? null,
      }),
    }),
  });

  const ContentRef = builder.objectRef<ContentView>('Content').implement({
    fields: (t) => ({
      contentId: t.exposeID('contentId'),
      kind: t.field({ type: types.GenerationKind, resolve: (c) => c.kind }),
      modelId: t.exposeID('modelId'),
      input: t.field({ type: 'JSON', resolve: (c) => c.input }),
      task: t.field({ type: TaskRef, resolve: (c) => c.task }),
      media: t.field({ type: [MediaRef], resolve: (c) => c.media }),
      creditsCharged: t.exposeInt('creditsCharged'),
      creditsRefunded: t.exposeInt('creditsRefunded', {
        description: 'What a non-zero finish returned to the balances (0 until then).',
      }),
      idempotencyKey: t.exposeString('idempotencyKey', { nullable: true }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  const SubmissionRef = builder.objectRef<Submission>('GenerationSubmission').implement({
    fields: (t) => ({
      contentId: t.exposeID('contentId'),
      taskId: t.exposeID('taskId'),
      deduplicated: t.exposeBoolean('deduplicated', {
        description: 'true when an earlier submission with the same idempotencyKey was returned',
      }),
      content: t.field({
        type: ContentRef,
        nullable: true,
        description:
          'Nullable on purpose: the IDs above survive a failure to read these (spec §4.1 rule 2).',
        resolve: (s, _args, ctx) => ctx.services.results.getContent(requireActor(ctx), s.contentId),
      }),
      task: t.field({
        type: TaskRef,
        nullable: true,
        resolve: (s, _args, ctx) => ctx.services.results.getTask(requireActor(ctx), s.taskId),
      }),
    }),
  });

  const CostEstimateRef = builder.objectRef<CostEstimate>('CostEstimate').implement({
    fields: (t) => ({
      credits: t.exposeInt('credits'),
      category: t.exposeString('category', { nullable: true }),
      affordable: t.exposeBoolean('affordable', { nullable: true }),
    }),
  });

  const CostEstimateInput = builder.inputType('CostEstimateInput', {
    fields: (t) => ({
      kind: t.field({ type: types.GenerationKind, required: true }),
      input: t.field({
        type: 'JSON',
        required: true,
        description: 'The same object as the matching generate*Input.',
      }),
    }),
  });

  const ContentFilter = builder.inputType('ContentFilter', {
    fields: (t) => ({
      kind: t.field({ type: types.GenerationKind }),
      status: t.field({ type: types.TaskStatus }),
      createdAfter: t.field({ type: 'DateTime' }),
      createdBefore: t.field({ type: 'DateTime' }),
      idempotencyKey: t.string(),
    }),
  });

  const ContentConnection = connectionRef(builder, 'ContentConnection', ContentRef, types.PageInfo);

  builder.queryFields((t) => ({
    getContent: t.field({
      type: ContentRef,
      nullable: true,
      description: 'One generation of the account: its task, its media.',
      args: { contentId: t.arg.id({ required: true }) },
      resolve: (_root, { contentId }, ctx) =>
        ctx.services.results.getContent(requireActor(ctx), contentId),
    }),
    getTask: t.field({
      type: TaskRef,
      nullable: true,
      args: { taskId: t.arg.id({ required: true }) },
      resolve: (_root, { taskId }, ctx) => ctx.services.results.getTask(requireActor(ctx), taskId),
    }),
    listContents: t.field({
      type: ContentConnection,
      nullable: true,
      description:
        "The account's generation history, newest first: the place to reconcile an uncertain submission.",
      args: {
        filter: t.arg({ type: ContentFilter }),
        first: t.arg.int({ defaultValue: 20 }),
        after: t.arg.string(),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.results.listContents(
          requireActor(ctx),
          args.filter ?? {},
          args.first,
          args.after,
        ),
    }),
    getDownloadUrls: t.field({
      type: [DownloadUrlRef],
      nullable: true,
      description:
        'Fresh, expiring download URLs for media of the account. Asking again refreshes them.',
      args: { mediaIds: t.arg.idList({ required: true }) },
      resolve: (_root, { mediaIds }, ctx) =>
        ctx.services.media.downloadUrls(requireActor(ctx), mediaIds),
    }),
    estimateCost: t.field({
      type: CostEstimateRef,
      nullable: true,
      description: 'What a generation would cost, without running it.',
      args: { input: t.arg({ type: CostEstimateInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        ctx.services.generations.estimate(optionalActor(ctx), input.kind, input.input),
    }),
  }));

  builder.subscriptionFields((t) => ({
    taskUpdated: t.field({
      type: TaskRef,
      description:
        'Every change of one task of the account, until it is finished: its current state first, or with `after` (a cursor of an earlier update) what came since.',
      args: {
        taskId: t.arg.id({ required: true }),
        after: t.arg.string({ description: 'The cursor of the last update received.' }),
      },
      subscribe: async (_root, { taskId, after }, ctx) => {
        const actor = requireActor(ctx);
        // An unknown or foreign task, or a bad cursor, is refused before any stream exists.
        return abortable((signal) =>
          ctx.services.results.watchTask(actor, taskId, signal, after ?? null),
        );
      },
      resolve: (task) => task,
    }),
    myTaskUpdates: t.field({
      type: TaskRef,
      description:
        'Every task change of the account, from now, or with `after` (a cursor of an earlier update) from there: what was missed first, then live, nothing twice.',
      args: {
        after: t.arg.string({ description: 'The cursor of the last update received.' }),
      },
      subscribe: async (_root, { after }, ctx) => {
        const actor = requireActor(ctx);
        return abortable((signal) =>
          ctx.services.results.watchAccountTasks(actor, signal, after ?? null),
        );
      },
      resolve: (task) => task,
    }),
  }));

  for (const kind of kindModules) {
    const input = kindInputType(builder, kind);
    builder.mutationField(kind.names.mutation, (t) =>
      t.field({
        type: SubmissionRef,
        nullable: true,
        description: `Starts ${kind.summary}. Charges its credits; the same idempotencyKey returns the same generation.`,
        args: { input: t.arg({ type: input, required: true }) },
        resolve: (_root, args, ctx) => submit(ctx, kind.kind, args.input),
      }),
    );
  }

  builder.mutationFields((t) => ({
    cancelTask: t.field({
      type: TaskRef,
      nullable: true,
      description:
        'Cancels a queued or running task; it finishes with finishCode 2 and its credits are refunded.',
      args: { taskId: t.arg.id({ required: true }) },
      resolve: (_root, { taskId }, ctx) =>
        ctx.services.generations.cancelTask(requireActor(ctx), taskId),
    }),
    deleteContent: t.field({
      type: 'Boolean',
      nullable: true,
      description:
        'Deletes a finished generation of the account: its media files go (their download URLs stop working) and it leaves listContents and getContent. What it was charged stays charged. A queued or running one is refused (120001): cancel its task first.',
      args: { contentId: t.arg.id({ required: true }) },
      resolve: (_root, { contentId }, ctx) =>
        ctx.services.deletions.deleteContent(requireActor(ctx), contentId),
    }),
  }));
}

/**
 * An async iterator whose `return()` (the client completed, or the socket closed) aborts the
 * underlying wait at once, instead of when the next event happens to arrive.
 */
async function abortable<T>(
  start: (signal: AbortSignal) => Promise<AsyncGenerator<T>>,
): Promise<AsyncIterableIterator<T>> {
  const controller = new AbortController();
  const inner = await start(controller.signal);
  const iterator: AsyncIterableIterator<T> = {
    next: () => inner.next(),
    return: async (value?: unknown) => {
      controller.abort();
      return inner.return(value as T);
    },
    throw: async (error?: unknown) => {
      controller.abort();
      return inner.throw(error);
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/** Submits, and logs the IDs under the request's id so its task can be followed in the logs. */
async function submit(
  ctx: GraphqlContext,
  kind: Parameters<Services['generations']['submit']>[1],
  input: Parameters<Services['generations']['submit']>[2],
) {
  const submitted = await ctx.services.generations.submit(requireActor(ctx), kind, input);
  ctx.log.info(
    {
      kind,
      contentId: submitted.contentId,
      taskId: submitted.taskId,
      deduplicated: submitted.deduplicated,
    },
    'generation submitted',
  );
  return submitted;
}
