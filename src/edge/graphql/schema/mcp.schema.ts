import type { McpClientInstruction } from '../../../services/mcp-client-instructions.ts';
import type { McpConnectionView } from '../../../services/mcp-connection.service.ts';
import type { Builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import { type SpendingTypes, spendingLimitsOf } from './spending.schema.ts';

export function addMcpSchema(builder: Builder, spending: SpendingTypes) {
  const Instruction = builder.objectRef<McpClientInstruction>('McpClientInstruction').implement({
    fields: (t) => ({
      clientName: t.exposeString('clientName'),
      serverUrl: t.exposeString('serverUrl', { description: 'The MCP endpoint URL to configure.' }),
      available: t.exposeBoolean('available', {
        description:
          'Whether the client connects to this server as it is configured now; when not, `instructions` says what is missing.',
      }),
      clientId: t.exposeString('clientId', {
        nullable: true,
        description:
          'The client ID to configure when the client cannot send a Client ID Metadata Document.',
      }),
      callbackRule: t.exposeString('callbackRule', {
        description: 'The callback (redirect URI) the client uses, and why it is accepted.',
      }),
      instructions: t.exposeString('instructions', { description: 'Markdown steps.' }),
      configSnippet: t.exposeString('configSnippet', { nullable: true }),
      docsUrl: t.exposeString('docsUrl', { nullable: true }),
    }),
  });

  const Connection = builder.objectRef<McpConnectionView>('McpConnection').implement({
    fields: (t) => ({
      clientId: t.exposeID('clientId'),
      clientName: t.exposeString('clientName', { nullable: true }),
      clientUri: t.exposeString('clientUri', { nullable: true }),
      logoUri: t.exposeString('logoUri', { nullable: true }),
      scopes: t.exposeStringList('scopes'),
      connectedAt: t.expose('connectedAt', { type: 'DateTime' }),
      lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
      revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
      limits: t.field({
        type: spending.SpendingLimitsRef,
        nullable: true,
        description: 'What the client may spend and on what; null: no limits beyond the account.',
        resolve: (c) => c.limits,
      }),
    }),
  });

  builder.queryFields((t) => ({
    listMcpClientInstructions: t.field({
      type: [Instruction],
      nullable: true,
      description: 'Setup metadata for MCP clients (public).',
      resolve: (_root, _args, ctx) => [...ctx.services.mcpConnections.instructions()],
    }),
    listPersonalMcpConnections: t.field({
      type: [Connection],
      nullable: true,
      description: 'MCP clients connected to the authenticated account.',
      resolve: (_root, _args, ctx) => ctx.services.mcpConnections.list(requireActor(ctx)),
    }),
  }));

  builder.mutationField('revokeMcpConnection', (t) =>
    t.field({
      type: Connection,
      nullable: true,
      description:
        "Removes the account's consent for the client and invalidates its stored access tokens and authorization codes.",
      args: { clientId: t.arg.id({ required: true }) },
      resolve: (_root, { clientId }, ctx) =>
        ctx.services.mcpConnections.revoke(requireActor(ctx), clientId),
    }),
  );

  builder.mutationField('setMcpConnectionLimits', (t) =>
    t.field({
      type: Connection,
      nullable: true,
      description:
        'Replaces what a connected MCP client may spend and on what, for all its tokens; null removes the limits.',
      args: {
        clientId: t.arg.id({ required: true }),
        limits: t.arg({ type: spending.SpendingLimitsInput }),
      },
      resolve: (_root, { clientId, limits }, ctx) =>
        ctx.services.mcpConnections.setLimits(
          requireActor(ctx),
          clientId,
          spendingLimitsOf(limits),
        ),
    }),
  );
  return { McpConnectionRef: Connection };
}
