/**
 * The MCP Inspector's tool-schema portability check, restated for tests: what
 * `npx @modelcontextprotocol/inspector --cli --method tools/list --strict` reports and the
 * Tools tab shows (`core/json/schemaLint.ts` in the Inspector, 2.x). It walks every subschema
 * position of a tool's input and output schema and finds:
 * - `boolean-schema` (error): a bare `true`/`false` where a schema object belongs (allowed only
 *   as the value of `additionalProperties` and its kin);
 * - `type-union` (warning): `type` given as an array of JSON types;
 * - `untyped-schema` (warning): a schema object with no keyword that constrains (`{}`, a
 *   description alone), except under `not`;
 * - `remote-ref` (warning): a `$ref` outside the document.
 * It is a portability lint, not a validator: each finding is legal JSON Schema that some MCP
 * client rejects or degrades. (The Inspector also keeps quiet on remote refs in a document that
 * declares an `$id`; Atelier's schemas declare none.)
 * test/integration/mcp/mcp-inspector.test.ts runs the Inspector itself with `--strict`, when
 * Chromium is there. This copy stays: tool-schemas.test.ts checks with it on both database
 * backends, without a browser or the Inspector package, and its findings name rule and pointer.
 */

export interface SchemaFinding {
  readonly tool: string;
  readonly schema: 'inputSchema' | 'outputSchema';
  /** Where, as a JSON pointer into that schema. */
  readonly at: string;
  readonly rule: 'boolean-schema' | 'type-union' | 'untyped-schema' | 'remote-ref';
}

/** Keywords whose value may be a boolean schema by design ("no other keys", "any other key"). */
const booleanAllowed = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
]);
const oneSchema = [
  'items',
  'contains',
  'not',
  'propertyNames',
  'if',
  'then',
  'else',
  'contentSchema',
  ...booleanAllowed,
];
const schemaLists = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const schemaMaps = [
  'properties',
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  '$defs',
  'definitions',
];
/** Keywords that restrict the value; annotations (`description`, `title`…) do not. */
const constraining = new Set([
  ...['type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum'],
  ...['exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'format', 'contentMediaType'],
  ...['contentEncoding', 'contentSchema', 'maxItems', 'minItems', 'uniqueItems', 'maxContains'],
  ...['minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired'],
  ...['allOf', 'anyOf', 'oneOf', 'not', 'items', 'prefixItems', 'contains', 'additionalItems'],
  ...['unevaluatedItems', 'properties', 'patternProperties', 'additionalProperties'],
  ...['unevaluatedProperties', 'propertyNames', 'dependentSchemas', 'dependencies'],
  ...['$ref', '$dynamicRef', '$recursiveRef'],
]);
const jsonTypes = new Set(['null', 'boolean', 'object', 'array', 'number', 'string', 'integer']);

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every finding on the tools' schemas, in `tools/list` order. */
export function lintToolSchemas(
  tools: readonly { name: string; inputSchema?: unknown; outputSchema?: unknown }[],
): SchemaFinding[] {
  const findings: SchemaFinding[] = [];
  for (const tool of tools) {
    for (const schema of ['inputSchema', 'outputSchema'] as const) {
      if (tool[schema] === undefined) continue;
      const report = (at: string, rule: SchemaFinding['rule']) =>
        findings.push({ tool: tool.name, schema, at, rule });
      walk(tool[schema], '', undefined, report);
    }
  }
  return findings;
}

function walk(
  schema: unknown,
  at: string,
  keyword: string | undefined,
  report: (at: string, rule: SchemaFinding['rule']) => void,
): void {
  if (typeof schema === 'boolean') {
    if (keyword === undefined || !booleanAllowed.has(keyword)) report(at, 'boolean-schema');
    return;
  }
  if (!isNode(schema)) return; // not a schema at all: the SDK's parser refuses it
  const { type, $ref } = schema;
  if (Array.isArray(type) && type.length > 0 && new Set(type).size === type.length) {
    if (type.every((t) => jsonTypes.has(t as string))) report(at, 'type-union');
  }
  if (typeof $ref === 'string' && $ref !== '' && !$ref.startsWith('#')) report(at, 'remote-ref');
  const constrains =
    Object.keys(schema).some((key) => constraining.has(key)) ||
    ('if' in schema && ('then' in schema || 'else' in schema));
  if (!constrains && keyword !== 'not') report(at, 'untyped-schema');

  for (const key of schemaMaps) {
    const map = schema[key];
    if (isNode(map))
      for (const [name, sub] of Object.entries(map)) walk(sub, `${at}/${key}/${name}`, key, report);
  }
  for (const key of schemaLists) {
    const list = schema[key];
    if (Array.isArray(list))
      for (const [i, sub] of list.entries()) walk(sub, `${at}/${key}/${i}`, key, report);
  }
  for (const key of oneSchema) {
    if (!(key in schema)) continue;
    const sub = schema[key];
    if (key !== 'items' || !Array.isArray(sub)) walk(sub, `${at}/${key}`, key, report);
    else for (const [i, item] of sub.entries()) walk(item, `${at}/items/${i}`, key, report);
  }
}
