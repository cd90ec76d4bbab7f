import type { ApiKeyInfo, CreatedApiKey } from '../../../services/api-key.service.ts';
import type { Builder } from '../builder.ts';
import { requireActor } from '../context.ts';

export function addApiKeySchema(builder: Builder): void {
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
        }),
    }),
    revokeApiKey: t.field({
      type: ApiKeyRef,
      nullable: true,
      args: { apiKeyId: t.arg.id({ required: true }) },
      resolve: (_root, { apiKeyId }, ctx) =>
        ctx.services.apiKeys.revoke(requireActor(ctx), apiKeyId),
    }),
  }));
}
