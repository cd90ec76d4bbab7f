import { auditActions } from '../../../domain/audit.ts';
import type { AuditEntryView } from '../../../services/audit.service.ts';
import type { Builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import { connectionRef } from './common.schema.ts';
import type { SharedTypes } from './shared-types.schema.ts';

type AuditActorView = AuditEntryView['actor'];

/** The audit log (issue 32 §3): an account reads its own entries, an admin everyone's. */
export function addAuditSchema(builder: Builder, shared: SharedTypes): void {
  const ActorRef = builder.objectRef<AuditActorView>('AuditActor').implement({
    description: 'Who acted.',
    fields: (t) => ({
      accountId: t.exposeID('accountId', {
        nullable: true,
        description: 'The acting account; null for the command line or, to others, an operator.',
      }),
      credential: t.exposeString('credential', {
        description:
          'api_key:<id>, id_token:<issuer>#<subject>, mcp:<client>, browser_session (the consent page), cli, signal (SIGHUP), or operator (an admin acting on your account).',
      }),
      address: t.exposeString('address', {
        nullable: true,
        description: 'The address the request came from.',
      }),
    }),
  });

  const EntryRef = builder.objectRef<AuditEntryView>('AuditEntry').implement({
    description: 'One credential or money event, or an operator action. Entries never change.',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Entries are numbered in the order they were written.' }),
      at: t.expose('at', { type: 'DateTime' }),
      accountId: t.exposeID('accountId', {
        nullable: true,
        description: 'The account it concerns; null for events of the whole service.',
      }),
      action: t.exposeString('action', { description: `One of: ${auditActions.join(', ')}.` }),
      target: t.exposeString('target', {
        nullable: true,
        description: 'What it concerns: a key, an endpoint, a client, a category, a model.',
      }),
      detail: t.expose('detail', {
        type: 'JSON',
        nullable: true,
        description: 'What changed; never a secret.',
      }),
      actor: t.field({ type: ActorRef, resolve: (entry) => entry.actor }),
    }),
  });

  const Connection = connectionRef(builder, 'AuditEntryConnection', EntryRef, shared.PageInfo);

  const Filter = builder.inputType('AuditLogFilter', {
    fields: (t) => ({
      accountId: t.id({
        description: 'Admins: one account’s entries. Others read their own whatever they pass.',
      }),
      action: t.string({ description: 'One action, e.g. api_key.created.' }),
      since: t.field({ type: 'DateTime', description: 'Entries at or after this time.' }),
      until: t.field({ type: 'DateTime', description: 'Entries before this time.' }),
    }),
  });

  builder.queryField('auditLog', (t) =>
    t.field({
      type: Connection,
      nullable: true,
      description:
        'Credential and money events, newest first: the account’s own; an admin’s, everyone’s (110202 for a non-admin naming another account).',
      args: {
        filter: t.arg({ type: Filter }),
        first: t.arg.int({ defaultValue: 50 }),
        after: t.arg.string(),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.audit.list(
          requireActor(ctx),
          {
            accountId: args.filter?.accountId ?? null,
            action: args.filter?.action ?? null,
            since: args.filter?.since ?? null,
            until: args.filter?.until ?? null,
          },
          args.first,
          args.after,
        ),
    }),
  );
}
