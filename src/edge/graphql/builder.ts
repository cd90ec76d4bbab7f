import SchemaBuilder from '@pothos/core';
import { DateTimeResolver, JSONResolver } from 'graphql-scalars';
import type { GraphqlContext } from './context.ts';

export interface SchemaTypes {
  Context: GraphqlContext;
  /** Fields are non-null unless they say otherwise, as in the contract; root fields opt out. */
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
}

export type Types = PothosSchemaTypes.ExtendDefaultTypes<SchemaTypes>;
export type Builder = PothosSchemaTypes.SchemaBuilder<Types>;

/** A fresh builder with the contract's scalars and root types; each schema/ area adds to it. */
export function createBuilder(): Builder {
  const builder = new SchemaBuilder<SchemaTypes>({ defaultFieldNullability: false });
  builder.addScalarType('DateTime', DateTimeResolver);
  builder.addScalarType('JSON', JSONResolver);
  builder.queryType({});
  builder.mutationType({});
  builder.subscriptionType({});
  return builder;
}
