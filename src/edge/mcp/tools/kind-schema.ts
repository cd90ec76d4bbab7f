import { z } from 'zod';
import type { FieldSpec, FieldTable } from '../../../domain/kinds/fields.ts';
import { kindNames } from '../../../domain/kinds/kinds.ts';
import type { GenerationKind } from '../../../domain/model.ts';
import { snakeCase } from '../wire-names.ts';

/** A generation kind as a tool argument: one of the kinds there are. */
export function kindArgument() {
  return z.enum(kindNames as [GenerationKind, ...GenerationKind[]]);
}

/**
 * A kind's field table as a tool's input schema (tools wrap it in `openObject`, so an
 * argument the kind does not take reaches the service, which names it, instead of being
 * dropped): snake_case names, the JSON type of each
 * field and its description. Types only: every rule beyond the type (ranges, lengths, the
 * model's formats) is the kind's, answered by the service as a tool error with the catalogue
 * code, the field and what is allowed, exactly as over GraphQL.
 */
export function toolShape(fields: FieldTable): Record<string, z.ZodType> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, spec]) => [snakeCase(name), argument(spec)]),
  );
}

function argument(spec: FieldSpec): z.ZodType {
  const type = {
    id: () => z.string(),
    string: () => z.string(),
    int: () => z.number().int(),
    float: () => z.number(),
    idList: () => z.array(z.string()),
  }[spec.type]();
  const described = spec.description === undefined ? type : type.describe(spec.description);
  return spec.required ? described : described.optional();
}
