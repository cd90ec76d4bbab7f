import type { z } from 'zod';

/**
 * One configuration variable, declared once: the loader, its error messages and the
 * configuration table (`npm run docs:config`) are all made from these.
 */
export interface Variable<T extends z.ZodType = z.ZodType> {
  /** Parses the value as given (a string, or a JSON value from `CONFIG_FILE`); its messages are the errors. */
  readonly type: T;
  /** Used when neither the environment nor `CONFIG_FILE` sets it, written as it would be there. */
  readonly default?: string;
  /** The table's default cell when it is not just {@link default} (derived, or worth a unit). */
  readonly shownDefault?: string;
  /** The table's meaning cell (Markdown, one line). */
  readonly description: string;
  /** An empty environment value is a value, not "unset" (DESIGN.md: empty turns CIMD off). */
  readonly emptyIsAValue?: boolean;
}

export type Variables = Readonly<Record<string, Variable>>;

/** The zod object shape of a declaration, keeping each variable's own type. */
export type ShapeOf<T extends Variables> = { [K in keyof T]: T[K]['type'] };

export function shapeOf<T extends Variables>(variables: T): ShapeOf<T> {
  return Object.fromEntries(
    Object.entries(variables).map(([name, variable]) => [name, variable.type]),
  ) as ShapeOf<T>;
}

/** Every declared default, by name. */
export function defaultsOf(variables: Variables): Record<string, string> {
  const defaults: Record<string, string> = {};
  for (const [name, variable] of Object.entries(variables))
    if (variable.default !== undefined) defaults[name] = variable.default;
  return defaults;
}
