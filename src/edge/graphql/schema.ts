import type { GraphQLSchema } from 'graphql';
import { createBuilder } from './builder.ts';
import { addAccountSchema } from './schema/account.schema.ts';
import { addApiKeySchema } from './schema/api-key.schema.ts';

/** The served schema: a compatible superset of docs/contract.graphql. */
export function buildGraphqlSchema(): GraphQLSchema {
  const builder = createBuilder();
  addAccountSchema(builder);
  addApiKeySchema(builder);
  return builder.toSchema({ sortSchema: false });
}
