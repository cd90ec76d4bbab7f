/**
 * Names on the MCP edge are snake_case, like the tools' arguments (`idempotency_key`), where
 * GraphQL and the services say camelCase (`idempotencyKey`). The domain keeps one spelling;
 * these convert at the edge, both ways.
 */

/** `idempotencyKey` → `idempotency_key`; `elementIds[1]` → `element_ids[1]`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Every key of every object in `value`, at any depth, in snake_case; values unchanged. */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [snakeCase(key), snakeCaseKeys(item)]),
  );
}

/** snake_case tool arguments → the camelCase input the services share with GraphQL. */
export function fromSnakeCase(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), value]),
  );
}
