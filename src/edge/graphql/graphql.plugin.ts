import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import mercurius from 'mercurius';
import type { AuthResult } from '../../auth/authenticate.ts';
import type { Services } from '../services.ts';
import type { GraphqlContext } from './context.ts';
import { errorBody, flattenErrors, toGraphqlError } from './error-formatter.ts';

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
  opts: { services: Services; schema: GraphQLSchema },
) {
  const { services } = opts;
  app.decorateRequest('graphqlAuth', null);

  // Credentials are settled before Mercurius parses anything: an invalid API key is answered
  // with 401 and no execution at all (spec §5.1, §7 rule 2; DESIGN.md "Error catalogue").
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
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

  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  await app.register(mercurius, {
    schema: opts.schema,
    path: '/graphql',
    graphiql: false,
    jit: 1,
    cache: true,
    context: (request): Omit<GraphqlContext, never> => ({
      auth: request.graphqlAuth ?? { kind: 'anonymous' },
      requestId: request.id,
      services,
    }),
    errorFormatter: (execution, ctx) => {
      const request = ctx.reply.request;
      const errors = flattenErrors(execution.errors ?? []);
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
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
