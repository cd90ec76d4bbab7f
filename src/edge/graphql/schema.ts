import type { GraphQLSchema } from 'graphql';
import { createBuilder } from './builder.ts';
import { addAccountSchema } from './schema/account.schema.ts';
import { addAdminSchema } from './schema/admin.schema.ts';
import { addApiKeySchema } from './schema/api-key.schema.ts';
import { addAuditSchema } from './schema/audit.schema.ts';
import { addCatalogueSchema } from './schema/catalogue.schema.ts';
import { addGenerationSchema } from './schema/generation.schema.ts';
import { addLibrarySchema } from './schema/library.schema.ts';
import { addMcpSchema } from './schema/mcp.schema.ts';
import { addSharedTypes } from './schema/shared-types.schema.ts';
import { addSpendingTypes } from './schema/spending.schema.ts';
import { addUsageSchema } from './schema/usage.schema.ts';
import { addWebhookSchema } from './schema/webhook.schema.ts';

/** The served schema: a compatible superset of docs/contract.graphql. */
export function buildGraphqlSchema(): GraphQLSchema {
  const builder = createBuilder();
  const { CreditBalanceRef } = addAccountSchema(builder);
  const shared = addSharedTypes(builder);
  const spending = addSpendingTypes(builder, shared);
  const { ApiKeyRef } = addApiKeySchema(builder, spending);
  const { ElementRef, ModelRef } = addCatalogueSchema(builder, shared);
  addLibrarySchema(builder, shared, ElementRef);
  addGenerationSchema(builder, shared);
  const { McpConnectionRef } = addMcpSchema(builder, spending);
  const { WebhookEndpointRef } = addWebhookSchema(builder);
  addAuditSchema(builder, shared);
  addAdminSchema(builder, shared, {
    CreditBalanceRef,
    ApiKeyRef,
    McpConnectionRef,
    WebhookEndpointRef,
    ModelRef,
  });
  addUsageSchema(builder, shared);
  return builder.toSchema({ sortSchema: false });
}
