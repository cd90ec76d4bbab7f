import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { MercuriusPlugin } from 'mercurius';
import {
  annotate,
  contextFrom,
  type OpenSpan,
  openSpan,
  withContext,
} from '../../observability/tracing.ts';

/**
 * A server span for each HTTP request (GraphQL, `/mcp`, `/v1`, and the rest), continuing the
 * caller's trace when it sends `traceparent`. Added to the root instance before any route,
 * and only when tracing is on (app.ts): off, requests pass no hook of this file.
 *
 * The span is made active twice: from `onRequest`, and again from the first `preHandler`,
 * because a request body is read in the socket's own async context, which the hooks after it
 * (and the handler) would otherwise inherit instead of the span's.
 */
export function traceRequests(app: FastifyInstance): void {
  const spans = new WeakMap<FastifyRequest, OpenSpan>();
  app.addHook('onRequest', (request, _reply, done) => {
    const span = openSpan(request.method, {
      kind: 'server',
      parent: contextFrom(request.headers),
      attributes: {
        'http.request.method': request.method,
        // The path only: query strings carry signatures and tokens.
        'url.path': request.url.split('?', 1)[0]!,
        'url.scheme': request.protocol,
        'atelier.request_id': request.id,
      },
    });
    if (span === null) return done();
    spans.set(request, span);
    withContext(span.context, done);
  });
  app.addHook('preHandler', (request, _reply, done) =>
    withContext(spans.get(request)?.context ?? null, done),
  );
  const end = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const span = spans.get(request);
    if (span !== undefined) {
      spans.delete(request);
      const route = request.routeOptions.url;
      if (route !== undefined && !request.is404) {
        span.rename(`${request.method} ${route}`);
        span.setAttributes({ 'http.route': route });
      }
      span.setAttributes({ 'http.response.status_code': reply.statusCode });
      if (reply.statusCode >= 500) span.fail(String(reply.statusCode));
      span.end();
    }
    done();
  };
  app.addHook('onResponse', end);
  app.addHook('onRequestAbort', (request, done) => {
    const span = spans.get(request);
    spans.delete(request);
    span?.fail('aborted');
    span?.end();
    done();
  });
}

/**
 * Mercurius hooks naming the GraphQL operation on the request's span: its type and the name the
 * document gives it (never the document or its variables).
 */
export function traceGraphqlOperations(graphql: MercuriusPlugin): void {
  graphql.addHook('preExecution', (_schema, document, context) => {
    const request = context.reply?.request;
    const from = (request?.method === 'GET' ? request.query : request?.body) as
      | { operationName?: unknown }
      | undefined;
    const wanted = typeof from?.operationName === 'string' ? from.operationName : undefined;
    const operations = document.definitions.filter((d) => d.kind === 'OperationDefinition');
    const operation =
      operations.length === 1 ? operations[0] : operations.find((o) => o.name?.value === wanted);
    if (operation === undefined) return;
    annotate({
      'graphql.operation.type': operation.operation,
      ...(operation.name === undefined ? {} : { 'graphql.operation.name': operation.name.value }),
    });
  });
}
