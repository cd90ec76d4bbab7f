import {
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLSchema,
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  Lexer,
  NoSchemaIntrospectionCustomRule,
  type OperationDefinitionNode,
  type SelectionSetNode,
  Source,
  TokenKind,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { QueryLimits } from '../../config/query-limits.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { maxPageSize } from '../../shared/pagination.ts';
import { acceptableTextRule } from './text-rule.ts';

function limitError(limit: string, max: number, actual: number, message: string): AppError {
  return new AppError(ErrorCode.QueryTooLarge, message, { limit, max, actual });
}

/**
 * Size and token count, checked on the source before it is parsed: a huge document costs
 * nothing more than reading it. Null when within limits.
 */
export function checkSource(query: string, limits: QueryLimits): AppError | null {
  if (query.length > limits.maxLength) {
    return limitError(
      'length',
      limits.maxLength,
      query.length,
      `The document has ${query.length} characters; at most ${limits.maxLength} are accepted.`,
    );
  }
  const lexer = new Lexer(new Source(query));
  let tokens = 0;
  try {
    while (lexer.advance().kind !== TokenKind.EOF) {
      if (++tokens > limits.maxTokens) {
        return limitError(
          'tokens',
          limits.maxTokens,
          tokens,
          `The document has more than ${limits.maxTokens} tokens.`,
        );
      }
    }
  } catch {
    return null; // a syntax error: the parser reports it properly
  }
  return null;
}

/** Validation rules enforcing the limits, added to graphql's own. */
export function limitRules(limits: QueryLimits): ValidationRule[] {
  const rules: ValidationRule[] = [
    (context) => operationLimits(context, limits),
    acceptableTextRule,
  ];
  if (!limits.introspection) rules.push(NoSchemaIntrospectionCustomRule);
  return rules;
}

function operationLimits(context: ValidationContext, limits: QueryLimits): ASTVisitor {
  const schema = context.getSchema();
  const report = (error: AppError, node: OperationDefinitionNode) =>
    context.reportError(new GraphQLError(error.message, { nodes: [node], originalError: error }));
  return {
    OperationDefinition(operation) {
      const root =
        operation.operation === 'query'
          ? schema.getQueryType()
          : operation.operation === 'mutation'
            ? schema.getMutationType()
            : schema.getSubscriptionType();
      const walk = new Walk(schema, (name) => context.getFragment(name) ?? undefined);
      const measured = walk.measure(operation.selectionSet, root ?? undefined, 1, new Set());
      const roots = walk.rootFields(operation.selectionSet, new Set());
      const checks: [string, number, number, string][] = [
        ['depth', limits.maxDepth, measured.depth, 'nested'],
        ['aliases', limits.maxAliases, walk.aliases, 'aliases'],
        ['rootFields', limits.maxRootFields, roots, 'root fields'],
        ['cost', limits.maxCost, measured.cost, 'cost'],
      ];
      for (const [limit, max, actual, what] of checks) {
        if (actual > max) {
          const message =
            limit === 'depth'
              ? `The operation is nested ${actual} levels deep; at most ${max} are accepted.`
              : limit === 'cost'
                ? `The operation would cost ${actual} (each field 1, times the page size of every list above it); at most ${max} is accepted. Ask for smaller pages.`
                : `The operation has ${actual} ${what}; at most ${max} are accepted.`;
          report(limitError(limit, max, actual, message), operation);
          return;
        }
      }
    },
  };
}

/**
 * Depth, cost and aliases of a selection set, fragments expanded (each at most once per path).
 * Introspection fields (`__schema`, `__type`, `__typename`) and what is under them add no
 * depth or cost: the standard introspection query nests 15 levels, its answer is bounded by the
 * schema, not the data, and graphql-js' `MaxIntrospectionDepthRule` refuses the nestings that
 * multiply it (`fields { type { fields … } }`). Their aliases still count.
 */
class Walk {
  aliases = 0;
  readonly #schema: GraphQLSchema;
  readonly #fragment: (name: string) => FragmentDefinitionNode | undefined;

  constructor(
    schema: GraphQLSchema,
    fragment: (name: string) => FragmentDefinitionNode | undefined,
  ) {
    this.#schema = schema;
    this.#fragment = fragment;
  }

  measure(
    selections: SelectionSetNode,
    parent: ReturnType<GraphQLSchema['getQueryType']> | undefined,
    depth: number,
    seen: ReadonlySet<string>,
  ): { depth: number; cost: number } {
    let deepest = depth;
    let cost = 0;
    for (const selection of selections.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.alias !== undefined) this.aliases++;
        const field = fieldOf(parent, selection);
        let below = { depth, cost: 0 };
        if (selection.selectionSet !== undefined) {
          const named = field === undefined ? undefined : getNamedType(field.type);
          const next =
            named !== undefined && (isObjectType(named) || isInterfaceType(named))
              ? named
              : undefined;
          below = this.measure(selection.selectionSet, next as typeof parent, depth + 1, seen);
        }
        if (selection.name.value.startsWith('__')) continue;
        deepest = Math.max(deepest, below.depth);
        cost += 1 + pageSize(field, selection) * below.cost;
      } else {
        const fragment =
          selection.kind === Kind.FRAGMENT_SPREAD
            ? seen.has(selection.name.value)
              ? undefined
              : this.#fragment(selection.name.value)
            : selection;
        if (fragment === undefined) continue;
        const typeName = fragment.typeCondition?.name.value;
        const type = typeName === undefined ? parent : this.#schema.getType(typeName);
        const next = new Set(seen);
        if (selection.kind === Kind.FRAGMENT_SPREAD) next.add(selection.name.value);
        const inner = this.measure(
          fragment.selectionSet,
          type !== undefined && type !== null && isObjectType(type) ? type : parent,
          depth,
          next,
        );
        deepest = Math.max(deepest, inner.depth);
        cost += inner.cost;
      }
    }
    return { depth: deepest, cost };
  }

  /** Root fields, fragments on the root expanded. */
  rootFields(selections: SelectionSetNode, seen: ReadonlySet<string>): number {
    let count = 0;
    for (const selection of selections.selections) {
      if (selection.kind === Kind.FIELD) count++;
      else if (selection.kind === Kind.INLINE_FRAGMENT)
        count += this.rootFields(selection.selectionSet, seen);
      else if (!seen.has(selection.name.value)) {
        const fragment = this.#fragment(selection.name.value);
        if (fragment !== undefined) {
          count += this.rootFields(fragment.selectionSet, new Set([...seen, selection.name.value]));
        }
      }
    }
    return count;
  }
}

function fieldOf(
  parent: ReturnType<GraphQLSchema['getQueryType']> | undefined,
  node: FieldNode,
): GraphQLField<unknown, unknown> | undefined {
  return parent?.getFields()[node.name.value];
}

/**
 * How many items a field may return for its children to be counted that often: the `first`
 * argument (a literal, else the largest page for a variable), else its default, else 1.
 */
function pageSize(field: GraphQLField<unknown, unknown> | undefined, node: FieldNode): number {
  const argument = field?.args.find((a) => a.name === 'first');
  if (argument === undefined) return 1;
  const given = node.arguments?.find((a) => a.name.value === 'first')?.value;
  if (given?.kind === Kind.INT) return Math.max(1, Number(given.value));
  if (given?.kind === Kind.VARIABLE) return maxPageSize;
  return typeof argument.defaultValue === 'number' ? argument.defaultValue : maxPageSize;
}
