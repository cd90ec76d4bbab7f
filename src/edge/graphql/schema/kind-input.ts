import type { FieldSpec } from '../../../domain/kinds/fields.ts';
import { type AnyKindModule, inputFieldsOf } from '../../../domain/kinds/kinds.ts';
import type { Builder, Types } from '../builder.ts';

type InputFields = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;

/**
 * A kind's `generate*Input`, made from its field table: the GraphQL type of each field, its
 * description and default. Every rule beyond the type is the kind's, answered by the service
 * with the same code as over MCP.
 */
export function kindInputType(builder: Builder, kind: AnyKindModule) {
  return builder.inputType(kind.names.inputType, {
    fields: (t) =>
      Object.fromEntries(
        Object.entries(inputFieldsOf(kind.kind)).map(([name, spec]) => [name, field(t, spec)]),
      ),
  });
}

function field(t: InputFields, spec: FieldSpec) {
  const required = spec.required ?? false;
  const description = spec.description;
  switch (spec.type) {
    case 'id':
      return t.id({ required, description });
    case 'string':
      return t.string({ required, description });
    case 'int':
      return t.int({ required, description, defaultValue: spec.default });
    case 'float':
      return t.float({ required, description, defaultValue: spec.default });
    case 'idList':
      return t.idList({ required, description });
  }
}
