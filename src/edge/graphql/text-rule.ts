import { type ASTVisitor, GraphQLError, type ValidationContext } from 'graphql';
import { invalidInput } from '../../shared/errors.ts';
import { textProblem } from '../../shared/text-input.ts';

/**
 * Refuses string literals no edge accepts (NUL, unpaired surrogates: `textProblem`) anywhere
 * in a document, as 120001 naming the argument path (`input.prompt`), the same field a bad
 * variable is named by. Escapes such as `"\u0000"` only become the character once parsed,
 * which is why this looks at the parsed values rather than the source.
 */
export function acceptableTextRule(context: ValidationContext): ASTVisitor {
  const names: string[] = [];
  const enter = (node: { name: { value: string } }) => {
    names.push(node.name.value);
  };
  const leave = () => {
    names.pop();
  };
  return {
    Argument: { enter, leave },
    ObjectField: { enter, leave },
    StringValue(node, key) {
      const message = textProblem(node.value);
      if (message === null) return;
      const field = names.join('.') + (typeof key === 'number' ? `[${key}]` : '');
      const error = invalidInput([{ field: field === '' ? 'query' : field, message }]);
      context.reportError(new GraphQLError(error.message, { nodes: [node], originalError: error }));
    },
  };
}
