import type { FastifyRequest } from 'fastify';
import { type DocumentNode, Kind, type OperationDefinitionNode } from 'graphql';
import type { MercuriusContext, MercuriusPlugin } from 'mercurius';
import type { GraphqlOperationType, Metrics } from '../../observability/metrics.ts';

/**
 * Mercurius hooks that count executed operations by type and outcome: the type is read from
 * the document before execution, the outcome from the result. A request refused before
 * execution (unparsable, invalid, 401) is no operation here; the HTTP histogram has it.
 */
export function graphqlOperationMetrics(metrics: Metrics): (graphql: MercuriusPlugin) => void {
  return (graphql) => {
    const types = new WeakMap<MercuriusContext, GraphqlOperationType>();
    graphql.addHook('preExecution', (_schema, document, context) => {
      const type = operationTypeOf(document, operationNameOf(context.reply?.request));
      if (type !== undefined) types.set(context, type);
    });
    graphql.addHook('onResolution', (execution, context) => {
      const type = types.get(context);
      if (type === undefined) return;
      types.delete(context);
      metrics.countGraphqlOperation(type, (execution.errors?.length ?? 0) > 0 ? 'error' : 'ok');
    });
  };
}

const operationTypes: Readonly<Record<string, GraphqlOperationType>> = {
  query: 'query',
  mutation: 'mutation',
  subscription: 'subscription',
};

/** The operation that runs: the only one, or the one `operationName` names. */
function operationTypeOf(
  document: DocumentNode,
  operationName: string | undefined,
): GraphqlOperationType | undefined {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation =
    operations.length === 1
      ? operations[0]
      : operations.find((o) => o.name?.value === operationName);
  return operation === undefined ? undefined : operationTypes[operation.operation];
}

/** `operationName` of a POST body or a GET query string (none for a direct `app.graphql` call). */
function operationNameOf(request: FastifyRequest | undefined): string | undefined {
  if (request === undefined) return undefined;
  const from = request.method === 'GET' ? request.query : request.body;
  const name = (from as { operationName?: unknown } | null)?.operationName;
  return typeof name === 'string' ? name : undefined;
}
