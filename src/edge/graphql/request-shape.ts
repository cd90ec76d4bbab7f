import type { FastifyRequest } from 'fastify';
import { getOperationAST, Kind, parse } from 'graphql';
import { AppError, ErrorCode } from '../../shared/errors.ts';

const isMap = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What each parameter of a POST body may be (GraphQL over HTTP, "Request Parameters"). */
const parameters: Record<string, (value: unknown) => boolean> = {
  query: (value) => typeof value === 'string',
  operationName: (value) => value === null || typeof value === 'string',
  variables: (value) => value === null || isMap(value),
  extensions: (value) => value === null || isMap(value),
};

/**
 * The POST body's parameters as sent, checked before Fastify's schema validation: that one
 * coerces types (`["{ … }"]` or `0` would become a query string), so a body that is not a
 * GraphQL request would run or fail later as a document error. Null when the shape is right;
 * `"extensions": null` is then dropped, as "no extensions".
 */
export function checkBodyShape(request: FastifyRequest): AppError | null {
  const body = request.body;
  if (request.method !== 'POST' || !isMap(body)) return null;
  const fields = body as Record<string, unknown>;
  for (const [name, valid] of Object.entries(parameters)) {
    if (fields[name] !== undefined && !valid(fields[name])) {
      return new AppError(
        ErrorCode.InvalidInput,
        `${name}: must be ${name === 'query' ? 'a string' : name === 'operationName' ? 'a string or null' : 'an object or null'}.`,
        { field: name },
      );
    }
  }
  if (fields.extensions === null) delete fields.extensions;
  return null;
}

/**
 * On GET, the operation to run must exist: Mercurius looks it up to refuse mutations and
 * fails on a missing one (several operations without `operationName`, or an unknown name)
 * with a TypeError. Null when it exists or the document does not parse (Mercurius reports
 * that itself). GET documents are parsed once more here; POST, the usual way, is not.
 */
export function checkGetOperation(request: FastifyRequest): AppError | null {
  if (request.method !== 'GET') return null;
  const { query, operationName } = (request.query ?? {}) as Record<string, unknown>;
  if (typeof query !== 'string') return null;
  const name = typeof operationName === 'string' && operationName !== '' ? operationName : null;
  let document: ReturnType<typeof parse>;
  try {
    document = parse(query);
  } catch {
    return null;
  }
  if (getOperationAST(document, name) !== null) return null;
  const several = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  return new AppError(
    ErrorCode.InvalidInput,
    name !== null
      ? `operationName: the document has no operation "${name}".`
      : several.length > 1
        ? 'operationName: required when the document has several operations.'
        : 'query: the document has no operation to run.',
    { field: name === null && several.length === 0 ? 'query' : 'operationName' },
  );
}
