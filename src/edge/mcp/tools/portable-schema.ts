import { z } from 'zod';

/**
 * Zod spellings for tool schemas that every MCP client reads alike. The MCP Inspector's schema
 * portability check (`--strict`, the Tools tab) warns on two things zod prints by default: a
 * `type` array (`["string", "null"]`), which clients that map tool schemas onto a single-`type`
 * dialect mishandle, and an empty schema `{}`, which constrains nothing. These say the same
 * contracts in the form that passes.
 */

/**
 * `type` or null, as `anyOf` with one type per branch. Zod folds a union of bare types into a
 * `type` array; a null branch that carries its meaning is not bare, so it stays a branch — and
 * the agent learns when the value is null.
 */
export function orNull<T extends z.ZodType>(type: T, whenNull: string) {
  return z.union([type, z.null().describe(whenNull)]);
}

/**
 * An object whose keys are not listed here (a model's capabilities differ by kind), or one that
 * takes keys beyond `shape` (a generation's arguments, which the service names when it does not
 * take one). Zod prints the extra keys' schema as `{}`; `true` is the same rule, spelled as
 * the keyword's own boolean form.
 */
export function openObject<S extends z.ZodRawShape>(shape: S) {
  return z.looseObject(shape).meta({ additionalProperties: true });
}
