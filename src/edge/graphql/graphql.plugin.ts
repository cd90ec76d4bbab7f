import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import mercurius, { type MercuriusPlugin } from 'mercurius';
import type { AuthResult } from '../../auth/authenticate.ts';
import type { QueryLimits } from '../../config/query-limits.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import type { Services } from '../services.ts';
import type { GraphqlContext } from './context.ts';
import { errorBody, flattenErrors, toGraphqlError } from './error-formatter.ts';
import { checkSource, limitRules } from './limits.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the GraphQL plugin before execution. */
    graphqlAuth: AuthResult | null;
  }
}

/**
 * `POST /graphql` and `GET /graphql` (queries only) with Mercurius: graphql-jit after the
 * first execution of a document, and its parsed-document cache (DESIGN.md rule 8).
 */
export async function graphqlPlugin(
  app: FastifyInstance,
  opts: {
    services: Services;
    schema: GraphQLSchema;
    limits: QueryLimits;
    maxBodyBytes: number;
    /** Adds further Mercurius hooks (operation metrics) once Mercurius is registered. */
    mercuriusHooks?: (graphql: MercuriusPlugin) => void;
  },
) {
  const { services } = opts;
  app.decorateRequest('graphqlAuth', null);

  // Credentials are settled before Mercurius parses anything: an invalid API key is answered
  // with 401 and no execution at all (spec §5.1, §7 rule 2; DESIGN.md "Error catalogue").
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    // Too long a document is refused before anything else is done with it.
    const tooLarge = checkSource(documentOf(request), opts.limits);
    if (tooLarge !== null) {
      return reply
        .code(400)
        .header('cache-control', 'no-store')
        .send(errorBody(tooLarge, request.id));
    }
    const auth = await services.graphqlAuth.authenticate({
      authorization: request.headers.authorization,
      idpToken: headerValue(request.headers['x-idp-token']),
    });
    if (auth.kind === 'refused' && auth.rejectRequest) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer error="invalid_token"')
        .header('cache-control', 'no-store')
        .send(errorBody(auth.error, request.id));
    }
    request.graphqlAuth = auth;
  });
  // Counted once the caller is known: per account, or per IP for anonymous and refused callers.
  app.addHook(
    'preHandler',
    app.limits.api(
      'graphql',
      (request) =>
        request.graphqlAuth?.kind === 'actor' ? request.graphqlAuth.actor.accountId : null,
      'graphql',
    ),
  );

  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  await app.register(mercurius, {
    schema: opts.schema,
    path: '/graphql',
    graphiql: false,
    jit: 1,
    cache: true,
    validationRules: limitRules(opts.limits),
    allowBatchedQueries: false,
    context: (request): Omit<GraphqlContext, never> => ({
      auth: request.graphqlAuth ?? { kind: 'anonymous' },
      requestId: request.id,
      services,
      log: request.log,
    }),
    errorFormatter: (execution, ctx) => {
      const request = ctx.reply.request;
      const errors = flattenErrors(execution.errors ?? []);
      // Fastify refused the body (MAX_BODY_BYTES) before Mercurius could read it.
      if (
        errors.some(
          (e) => (e.originalError as { code?: unknown })?.code === 'FST_ERR_CTP_BODY_TOO_LARGE',
        )
      ) {
        const error = new AppError(
          ErrorCode.QueryTooLarge,
          'The request body is larger than the server accepts; send smaller variables.',
          { limit: 'bodyBytes', max: opts.maxBodyBytes },
        );
        return { statusCode: 413, response: errorBody(error, request.id) };
      }
      const requestErrorsOnly = errors.every((e) => e.path === undefined);
      return {
        statusCode: execution.data == null && requestErrorsOnly ? 400 : 200,
        response: {
          data: execution.data ?? null,
          errors: errors.map((e) => toGraphqlError(e, request.id, request.log)),
        },
      };
    },
  });
  opts.mercuriusHooks?.(app.graphql);
}

/** The GraphQL document of a POST body or a GET query string ('' when there is none). */
function documentOf(request: FastifyRequest): string {
  const from = request.method === 'GET' ? request.query : request.body;
  const query = (from as { query?: unknown } | null)?.query;
  return typeof query === 'string' ? query : '';
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
