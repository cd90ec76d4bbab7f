import type { ApiKeyInfo, CreatedApiKey } from '../../../services/api-key.service.ts';
import type { Builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import { type SpendingTypes, spendingLimitsOf } from './spending.schema.ts';

export function addApiKeySchema(builder: Builder, spending: SpendingTypes) {
  const ApiKeyRef = builder.objectRef<ApiKeyInfo>('ApiKey').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      prefix: t.exposeString('prefix', {
        description: 'The first characters of the key, enough to recognise it (e.g. svc_ab12).',
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
      revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
      lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
      limits: t.field({
        type: spending.SpendingLimitsRef,
        nullable: true,
        description: 'What the key may spend and on what; null: no limits beyond the account.',
        resolve: (key) => key.limits,
      }),
    }),
  });

  const CreatedApiKeyRef = builder.objectRef<CreatedApiKey>('CreatedApiKey').implement({
    fields: (t) => ({
      apiKey: t.expose('apiKey', { type: ApiKeyRef }),
      secret: t.exposeString('secret', {
        description: 'svc_ followed by 32 characters. Shown once.',
      }),
    }),
  });

  const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
    fields: (t) => ({
      name: t.string({ required: true }),
      expiresAt: t.field({ type: 'DateTime' }),
      limits: t.field({ type: spending.SpendingLimitsInput }),
    }),
  });

  builder.queryField('listApiKeys', (t) =>
    t.field({
      type: [ApiKeyRef],
      nullable: true,
      description: "Metadata of the account's API keys; never the secret.",
      resolve: (_root, _args, ctx) => ctx.services.apiKeys.list(requireActor(ctx)),
    }),
  );

  builder.mutationFields((t) => ({
    createApiKey: t.field({
      type: CreatedApiKeyRef,
      nullable: true,
      description: 'The full secret is in the result once and never again.',
      args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        ctx.services.apiKeys.create(requireActor(ctx), {
          name: input.name,
          expiresAt: input.expiresAt ?? null,
          limits: spendingLimitsOf(input.limits),
        }),
    }),
    setApiKeyLimits: t.field({
      type: ApiKeyRef,
      nullable: true,
      description: "Replaces the key's spending limits; null removes them.",
      args: {
        apiKeyId: t.arg.id({ required: true }),
        limits: t.arg({ type: spending.SpendingLimitsInput }),
      },
      resolve: (_root, { apiKeyId, limits }, ctx) =>
        ctx.services.apiKeys.setLimits(requireActor(ctx), apiKeyId, spendingLimitsOf(limits)),
    }),
    revokeApiKey: t.field({
      type: ApiKeyRef,
      nullable: true,
      args: { apiKeyId: t.arg.id({ required: true }) },
      resolve: (_root, { apiKeyId }, ctx) =>
        ctx.services.apiKeys.revoke(requireActor(ctx), apiKeyId),
    }),
  }));
  return { ApiKeyRef };
}
