import type { GraphQLSchema } from 'graphql';
import { createBuilder } from './builder.ts';
import { addAccountSchema } from './schema/account.schema.ts';
import { addApiKeySchema } from './schema/api-key.schema.ts';
import { addCatalogueSchema } from './schema/catalogue.schema.ts';
import { addGenerationSchema } from './schema/generation.schema.ts';
import { addMcpSchema } from './schema/mcp.schema.ts';
import { addSharedTypes } from './schema/shared-types.schema.ts';

/** The served schema: a compatible superset of docs/contract.graphql. */
export function buildGraphqlSchema(): GraphQLSchema {
  const builder = createBuilder();
  addAccountSchema(builder);
  addApiKeySchema(builder);
  const shared = addSharedTypes(builder);
  addCatalogueSchema(builder, shared);
  addGenerationSchema(builder, shared);
  addMcpSchema(builder);
  return builder.toSchema({ sortSchema: false });
}
