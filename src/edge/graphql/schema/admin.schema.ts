import type { ObjectRef } from '@pothos/core';
import type { CreditBalance, UserProfile } from '../../../services/account.service.ts';
import type { OperatorTaskView, QueuePoint } from '../../../services/admin.service.ts';
import type { ApiKeyInfo } from '../../../services/api-key.service.ts';
import type { ModelView } from '../../../services/catalogue.service.ts';
import type { McpConnectionView } from '../../../services/mcp-connection.service.ts';
import type { WebhookEndpointView } from '../../../services/webhook.service.ts';
import type { Builder, Types } from '../builder.ts';
import { requireActor } from '../context.ts';
import { connectionRef } from './common.schema.ts';
import type { SharedTypes } from './shared-types.schema.ts';

export interface AdminRefs {
  CreditBalanceRef: ObjectRef<Types, CreditBalance>;
  ApiKeyRef: ObjectRef<Types, ApiKeyInfo>;
  McpConnectionRef: ObjectRef<Types, McpConnectionView>;
  WebhookEndpointRef: ObjectRef<Types, WebhookEndpointView>;
  ModelRef: ObjectRef<Types, ModelView>;
}

const forAdmins = 'Admin accounts only (110202 for others).';

/** The operator's side (issue 32 §1): additions only, every field refused to non-admins. */
export function addAdminSchema(builder: Builder, shared: SharedTypes, refs: AdminRefs): void {
  const AccountStatus = builder.enumType('AccountStatus', {
    values: ['active', 'suspended', 'deleted'] as const,
  });
  const AccountRole = builder.enumType('AccountRole', { values: ['user', 'admin'] as const });

  const Failure = builder
    .objectRef<NonNullable<OperatorTaskView['failure']>>('OperatorTaskFailure')
    .implement({
      description: 'The last run of a task that did not succeed on a backend of its pool.',
      fields: (t) => ({
        backend: t.exposeString('backend', { description: '<model>/<backend name>' }),
        outcome: t.exposeString('outcome', {
          description: 'failed, failed_over, error, lost or stopped.',
        }),
        providerStatus: t.exposeInt('providerStatus', {
          nullable: true,
          description: 'The HTTP status the model server answered with, if it answered.',
        }),
        detail: t.exposeString('detail', {
          nullable: true,
          description: 'What the provider or driver said (secrets removed).',
        }),
      }),
    });

  const Task = builder.objectRef<OperatorTaskView>('OperatorTask').implement({
    description: 'A task as an operator sees it. The account sees only the class of a failure.',
    fields: (t) => ({
      taskId: t.exposeID('taskId'),
      contentId: t.exposeID('contentId'),
      accountId: t.exposeID('accountId'),
      accountAlias: t.exposeString('accountAlias'),
      modelId: t.exposeID('modelId'),
      kind: t.field({ type: shared.GenerationKind, resolve: (task) => task.kind as never }),
      status: t.field({ type: shared.TaskStatus, resolve: (task) => task.status }),
      finishCode: t.exposeInt('finishCode', { nullable: true }),
      finishMessage: t.exposeString('finishMessage', { nullable: true }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
      finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
      attempts: t.exposeInt('attempts'),
      creditsCharged: t.exposeInt('creditsCharged'),
      creditsRefunded: t.exposeInt('creditsRefunded'),
      backend: t.exposeString('backend', {
        nullable: true,
        description: 'The backend of its last run, for a model with a pool.',
      }),
      failure: t.field({ type: Failure, nullable: true, resolve: (task) => task.failure }),
    }),
  });
  const TaskConnection = connectionRef(builder, 'OperatorTaskConnection', Task, shared.PageInfo);

  const Account = builder.objectRef<UserProfile>('AdminAccount').implement({
    description: 'An account as an operator sees it; the lists are read when asked for.',
    fields: (t) => ({
      id: t.exposeID('id'),
      alias: t.exposeString('alias'),
      status: t.field({ type: AccountStatus, resolve: (a) => a.status }),
      role: t.field({ type: AccountRole, resolve: (a) => a.role }),
      apiKeyAccess: t.exposeBoolean('apiKeyAccess'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      creditBalances: t.field({ type: [refs.CreditBalanceRef], resolve: (a) => a.creditBalances }),
      emails: t.stringList({
        description: 'The emails it signs in with.',
        resolve: (a, _args, ctx) => ctx.services.admin.emails(requireActor(ctx), a.id),
      }),
      apiKeys: t.field({
        type: [refs.ApiKeyRef],
        description: 'Its keys: prefix, metadata and limits; never a secret.',
        resolve: (a, _args, ctx) => ctx.services.admin.apiKeys(requireActor(ctx), a.id),
      }),
      mcpConnections: t.field({
        type: [refs.McpConnectionRef],
        resolve: (a, _args, ctx) => ctx.services.admin.mcpConnections(requireActor(ctx), a.id),
      }),
      webhookEndpoints: t.field({
        type: [refs.WebhookEndpointRef],
        resolve: (a, _args, ctx) => ctx.services.admin.webhookEndpoints(requireActor(ctx), a.id),
      }),
      recentTasks: t.field({
        type: [Task],
        args: { first: t.arg.int({ defaultValue: 10 }) },
        resolve: async (a, args, ctx) =>
          (await ctx.services.admin.tasks(requireActor(ctx), { accountId: a.id }, args.first, null))
            .nodes,
      }),
    }),
  });
  const AccountConnection = connectionRef(
    builder,
    'AdminAccountConnection',
    Account,
    shared.PageInfo,
  );

  const QueuePointRef = builder.objectRef<QueuePoint>('QueuePoint').implement({
    description: 'The queue at one instant, and what was submitted until the next.',
    fields: (t) => ({
      at: t.expose('at', { type: 'DateTime' }),
      queued: t.exposeInt('queued', { description: 'Submitted by then and not yet started.' }),
      running: t.exposeInt('running', { description: 'Started by then and not yet finished.' }),
      submitted: t.exposeInt('submitted', { description: 'Submitted from then until the next.' }),
      meanWaitSeconds: t.exposeFloat('meanWaitSeconds', {
        nullable: true,
        description: 'Their mean wait from submission to start, of those that started.',
      }),
    }),
  });

  const TaskFilter = builder.inputType('OperatorTaskFilter', {
    fields: (t) => ({
      accountId: t.id(),
      modelId: t.id(),
      backend: t.string({ description: 'A backend: <model>/<name>. Any run on it counts.' }),
      finishCode: t.int(),
      failed: t.boolean({ description: 'Only tasks that finished with a code other than 0.' }),
      status: t.field({ type: shared.TaskStatus }),
      since: t.field({ type: 'DateTime', description: 'Submitted at or after.' }),
      until: t.field({ type: 'DateTime', description: 'Submitted before.' }),
    }),
  });

  const Adjustment = builder.inputType('CreditAdjustmentInput', {
    fields: (t) => ({
      accountId: t.id({ required: true }),
      category: t.string({ required: true }),
      amount: t.int({ required: true, description: 'A whole number of credits, at least 1.' }),
      reason: t.string({
        required: true,
        description: 'Why: kept on the ledger row and in the audit log (1 to 200 characters).',
      }),
    }),
  });

  builder.queryFields((t) => ({
    adminAccounts: t.field({
      type: AccountConnection,
      nullable: true,
      description: `Accounts by alias, found by part of an alias or email, or a whole ID. ${forAdmins}`,
      args: {
        search: t.arg.string(),
        status: t.arg({ type: AccountStatus }),
        first: t.arg.int({ defaultValue: 50 }),
        after: t.arg.string(),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.admin.accounts(
          requireActor(ctx),
          { text: args.search, status: args.status },
          args.first,
          args.after,
        ),
    }),
    adminAccount: t.field({
      type: Account,
      nullable: true,
      description: `One account, or null. ${forAdmins}`,
      args: { accountId: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => ctx.services.admin.account(requireActor(ctx), args.accountId),
    }),
    adminQueueHistory: t.field({
      type: [QueuePointRef],
      nullable: true,
      description: `The queue's depth and wait over time (every model, or one), from the tasks' own times: \`points\` instants from \`from\` to \`to\` (at most 31 days). A task that waited more than a day before an instant is not counted in it. ${forAdmins}`,
      args: {
        from: t.arg({ type: 'DateTime', required: true }),
        to: t.arg({ type: 'DateTime', required: true }),
        points: t.arg.int({ defaultValue: 48 }),
        modelId: t.arg.id(),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.admin.queueHistory(requireActor(ctx), {
          from: args.from,
          to: args.to,
          points: args.points ?? 48,
          modelId: args.modelId,
        }),
    }),
    adminTasks: t.field({
      type: TaskConnection,
      nullable: true,
      description: `Tasks of every account, newest first, with their failures' detail. ${forAdmins}`,
      args: {
        filter: t.arg({ type: TaskFilter }),
        first: t.arg.int({ defaultValue: 50 }),
        after: t.arg.string(),
      },
      resolve: (_root, args, ctx) => {
        const f = args.filter;
        return ctx.services.admin.tasks(
          requireActor(ctx),
          {
            accountId: f?.accountId ?? undefined,
            modelId: f?.modelId ?? undefined,
            backend: f?.backend ?? undefined,
            finishCode: f?.finishCode ?? undefined,
            failed: f?.failed ?? undefined,
            status: f?.status ?? undefined,
            since: f?.since ?? undefined,
            until: f?.until ?? undefined,
          },
          args.first,
          args.after,
        );
      },
    }),
  }));

  builder.mutationFields((t) => ({
    adminGrantCredits: t.field({
      type: refs.CreditBalanceRef,
      nullable: true,
      description: `Adds credits with a reason (a ledger row, an audit entry); returns the balance. ${forAdmins}`,
      args: { input: t.arg({ type: Adjustment, required: true }) },
      resolve: (_root, { input }, ctx) =>
        ctx.services.admin.grant(requireActor(ctx), { ...input, reference: input.reason }),
    }),
    adminDeductCredits: t.field({
      type: refs.CreditBalanceRef,
      nullable: true,
      description: `Takes credits back with a reason, never below zero; returns the balance. ${forAdmins}`,
      args: { input: t.arg({ type: Adjustment, required: true }) },
      resolve: (_root, { input }, ctx) =>
        ctx.services.admin.deduct(requireActor(ctx), { ...input, reference: input.reason }),
    }),
    adminRevokeApiKey: t.field({
      type: refs.ApiKeyRef,
      nullable: true,
      description: `Revokes a key of the account (a leaked one, say): it stops on its next request, on every node. In the audit log. ${forAdmins}`,
      args: {
        accountId: t.arg.id({ required: true }),
        apiKeyId: t.arg.id({ required: true }),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.admin.revokeApiKey(requireActor(ctx), args.accountId, args.apiKeyId),
    }),
    adminSetModelStatus: t.field({
      type: refs.ModelRef,
      nullable: true,
      description: `Sets a model's status at runtime, on every node, over the configuration's; null gives it back to the configuration. In the audit log. ${forAdmins}`,
      args: {
        modelId: t.arg.id({ required: true }),
        status: t.arg({ type: shared.ModelStatus }),
      },
      resolve: async (_root, args, ctx) => {
        const actor = requireActor(ctx);
        await ctx.services.admin.setModelStatus(actor, args.modelId, args.status ?? null);
        return ctx.services.catalogue.getModel(actor, args.modelId);
      },
    }),
    adminSetAccountStatus: t.field({
      type: Account,
      nullable: true,
      description: `Suspends (every credential stops at once, on every node) or reactivates an account. ${forAdmins}`,
      args: {
        accountId: t.arg.id({ required: true }),
        status: t.arg({ type: AccountStatus, required: true }),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.admin.setStatus(requireActor(ctx), args.accountId, args.status as never),
    }),
  }));
}
