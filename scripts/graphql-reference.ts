// The GraphQL reference (docs/graphql-reference.md), rendered from the served schema and its
// descriptions: written by `npm run docs:graphql`, held current by
// test/conformance/graphql-reference.test.ts.
import {
  astFromValue,
  type GraphQLArgument,
  GraphQLEnumType,
  type GraphQLField,
  type GraphQLInputField,
  GraphQLInputObjectType,
  GraphQLObjectType,
  GraphQLScalarType,
  type GraphQLSchema,
  GraphQLUnionType,
  print,
} from 'graphql';

export const referencePage = 'docs/graphql-reference.md';

/** One line of a description, safe in a table cell. */
const cell = (text: string | null | undefined) =>
  (text ?? '').replace(/\s*\n\s*/g, ' ').replaceAll('|', '\\|');

function defaultOf(arg: GraphQLArgument | GraphQLInputField): string {
  if (arg.defaultValue === undefined) return '';
  const ast = astFromValue(arg.defaultValue, arg.type);
  return ast === null || ast === undefined ? '' : `\`${print(ast)}\``;
}

function argumentsTable(args: readonly GraphQLArgument[]): string[] {
  if (args.length === 0) return [];
  return [
    '',
    '| argument | type | default | description |',
    '|---|---|---|---|',
    ...args.map(
      (a) => `| \`${a.name}\` | \`${String(a.type)}\` | ${defaultOf(a)} | ${cell(a.description)} |`,
    ),
  ];
}

function rootField(field: GraphQLField<unknown, unknown>): string[] {
  const deprecated = field.deprecationReason ? ` Deprecated: ${field.deprecationReason}` : '';
  return [
    `### \`${field.name}\``,
    '',
    `Returns \`${String(field.type)}\`. ${cell(field.description)}${deprecated}`.trimEnd(),
    ...argumentsTable(field.args),
    '',
  ];
}

function typeSection(type: unknown): string[] {
  if (type instanceof GraphQLObjectType) {
    return [
      `### \`${type.name}\``,
      '',
      ...(type.description ? [cell(type.description), ''] : []),
      '| field | type | description |',
      '|---|---|---|',
      ...Object.values(type.getFields()).map((f) => {
        const args =
          f.args.length === 0
            ? ''
            : `(${f.args.map((a) => `${a.name}: ${String(a.type)}`).join(', ')})`;
        return `| \`${f.name}${args}\` | \`${String(f.type)}\` | ${cell(f.description)} |`;
      }),
      '',
    ];
  }
  if (type instanceof GraphQLInputObjectType) {
    return [
      `### \`${type.name}\` (input)`,
      '',
      ...(type.description ? [cell(type.description), ''] : []),
      '| field | type | default | description |',
      '|---|---|---|---|',
      ...Object.values(type.getFields()).map(
        (f) =>
          `| \`${f.name}\` | \`${String(f.type)}\` | ${defaultOf(f)} | ${cell(f.description)} |`,
      ),
      '',
    ];
  }
  if (type instanceof GraphQLEnumType) {
    return [
      `### \`${type.name}\` (enum)`,
      '',
      ...(type.description ? [cell(type.description), ''] : []),
      type
        .getValues()
        .map((v) => `\`${v.name}\``)
        .join(' · '),
      '',
    ];
  }
  if (type instanceof GraphQLUnionType) {
    return [
      `### \`${type.name}\` (union)`,
      '',
      type
        .getTypes()
        .map((t) => `\`${t.name}\``)
        .join(' · '),
      '',
    ];
  }
  if (type instanceof GraphQLScalarType) {
    return [
      `### \`${type.name}\` (scalar)`,
      '',
      ...(type.description ? [cell(type.description), ''] : []),
    ];
  }
  return [];
}

/** The reference page of `schema`: its root fields, then every named type, by name. */
export function renderGraphqlReference(schema: GraphQLSchema): string {
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()];
  const rootNames = new Set(roots.flatMap((r) => (r ? [r.name] : [])));
  const named = Object.values(schema.getTypeMap())
    .filter((t) => !t.name.startsWith('__') && !rootNames.has(t.name))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const lines = [
    '# GraphQL reference',
    '',
    '<!-- generated from the served schema by `npm run docs:graphql`; do not edit -->',
    '',
    'Every operation and type the server answers, with the descriptions the schema carries',
    '(`POST /graphql`; the contract it keeps is [contract.graphql](contract.graphql)). How to call',
    'it: [The GraphQL API](graphql.md).',
    '',
  ];
  for (const root of roots) {
    if (!root) continue;
    lines.push(`## ${root.name}`, '');
    for (const field of Object.values(root.getFields())) lines.push(...rootField(field));
  }
  lines.push('## Types', '');
  for (const type of named) lines.push(...typeSection(type));
  return `${lines.join('\n').trimEnd()}\n`;
}
