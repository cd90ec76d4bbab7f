import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getOperationAST,
  Kind,
  parse,
  type SelectionSetNode,
} from 'graphql';

/**
 * How many generations a GraphQL document submits: the distinct response keys of `generate*`
 * root fields in the operation that runs (fragments and inline fragments followed, `@skip`
 * and `@include` ignored, so never fewer than may run). Fifteen aliases of `generateImage` are
 * fifteen submissions; a repeated field with the same key is merged by GraphQL and runs once.
 * 0 for anything that is not a mutation, or that does not parse (its error is answered later).
 */
export function submissionsIn(source: string, operationName?: string | null): number {
  // Field names cannot be escaped: without the word there is nothing to parse for.
  if (!source.includes('generate')) return 0;
  let document: DocumentNode;
  try {
    document = parse(source, { noLocation: true });
  } catch {
    return 0;
  }
  const operation = getOperationAST(document, operationName ?? undefined);
  if (operation?.operation !== 'mutation') return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition);
  const keys = new Set<string>();
  const visit = (selections: SelectionSetNode, seen: Set<string>) => {
    for (const selection of selections.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('generate'))
          keys.add(selection.alias?.value ?? selection.name.value);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet, seen);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // A cycle is a validation error; stopping here keeps this function total.
        if (fragment !== undefined && !seen.has(name))
          visit(fragment.selectionSet, new Set([...seen, name]));
      }
    }
  };
  visit(operation.selectionSet, new Set());
  return keys.size;
}
