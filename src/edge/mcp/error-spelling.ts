import { inputFieldsOf, kindNames } from '../../domain/kinds/kinds.ts';
import type { AppError } from '../../shared/errors.ts';
import { snakeCase } from './wire-names.ts';

/** The services' names of the generation arguments, which an `allowed` list may hold. */
const argumentNames: ReadonlySet<string> = new Set(
  kindNames.flatMap((kind) => Object.keys(inputFieldsOf(kind))),
);

/**
 * An error's message and details as an agent reads them over MCP: every key in snake_case
 * (`request_id`, `max_elements`), and every name of an argument spelled as the tools take it —
 * `field` (and each problem's), an `allowed` list of arguments (for one the tool does not take)
 * and those names in the message. The services, and GraphQL, keep camelCase.
 */
export function snakeCaseError(error: AppError): {
  message: string;
  details: Record<string, unknown>;
} {
  const named = new Set(argumentNames);
  const spell = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value))
      return value.map((item) =>
        key === 'allowed' && typeof item === 'string' && argumentNames.has(item)
          ? snakeCase(item)
          : spell(item),
      );
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, item]) => {
        if (k !== 'field' || typeof item !== 'string') return [snakeCase(k), spell(item, k)];
        named.add(/^[A-Za-z]+/.exec(item)?.[0] ?? item);
        return [k, snakeCase(item)];
      }),
    );
  };
  const details = spell(error.details) as Record<string, unknown>;
  return { message: renameIn(error.message, named), details };
}

/** `names` (those with a capital) renamed where they stand as whole words in `text`. */
function renameIn(text: string, names: ReadonlySet<string>): string {
  const camel = [...names].filter((name) => /^[a-z]+[A-Z][A-Za-z]*$/.test(name));
  if (camel.length === 0) return text;
  return text.replace(new RegExp(`\\b(${camel.join('|')})\\b`, 'g'), snakeCase);
}
