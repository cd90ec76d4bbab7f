import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import mercurius, { type MercuriusPlugin } from 'mercurius';
import { type AuthResult, withAddress } from '../../auth/authenticate.ts';
import type { QueryLimits } from '../../config/query-limits.ts';
import { invalidInput } from '../../shared/errors.ts';
import { findTextProblem } from '../../shared/text-input.ts';
import { httpStatusOf } from '../http/error-status.ts';
import type { Services } from '../services.ts';
import type { GraphqlContext } from './context.ts';
import { errorBody, logRefusal } from './error-formatter.ts';
import { answerErrors, setGraphqlMediaType } from './http-answer.ts';
import { checkSource, limitRules } from './limits.ts';
import { requestErrorStatus, responseMediaType } from './media-type.ts';
import { checkBodyShape, checkGetOperation } from './request-shape.ts';
import { submissionsIn } from './submissions.ts';

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

  // Credentials are settled before Mercurius parses anything: an invalid API key or ID token
  // is answered with 401 and no execution at all (spec §5.1, §7 rule 2; DESIGN.md "Error
  // catalogue").
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    // Too long a document, and text no edge accepts (NUL, unpaired surrogates) in the
    // variables, are refused before anything else is done with them; literals: text-rule.ts.
    const badText = findTextProblem(variablesOf(request), '');
    const refused =
      checkSource(documentOf(request), opts.limits) ??
      checkGetOperation(request) ??
      (badText === null ? null : invalidInput([badText]));
    if (refused !== null) {
      const mediaType = responseMediaType(request);
      return reply
        .code(requestErrorStatus(mediaType))
        .header('cache-control', 'no-store')
        .send(errorBody(refused, request.id, mediaType));
    }
    const auth = await services.graphqlAuth.authenticate({
      authorization: request.headers.authorization,
      idpToken: headerValue(request.headers['x-idp-token']),
    });
    logRefusal(request.log, auth, app.outages);
    if (auth.kind === 'refused' && auth.rejectRequest) {
      return reply
        .code(httpStatusOf[auth.error.code])
        .header('www-authenticate', 'Bearer error="invalid_token"')
        .header('cache-control', 'no-store')
        .send(errorBody(auth.error, request.id, responseMediaType(request)));
    }
    request.graphqlAuth = withAddress(auth, request.ip);
  });
  // Counted once the caller is known: per account, or per IP for anonymous and refused callers.
  // A document weighs one hit per generation it submits (at least one), all counted before
  // anything runs, so aliases cannot pass many submissions as one request.
  app.addHook(
    'preHandler',
    app.limits.api(
      'graphql',
      (request) =>
        request.graphqlAuth?.kind === 'actor' ? request.graphqlAuth.actor.accountId : null,
      'graphql',
      (request) => Math.max(1, submissionsIn(documentOf(request), operationNameOf(request))),
    ),
  );

  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
  app.addHook('onSend', setGraphqlMediaType);
  app.addHook('preValidation', async (request, reply) => {
    const malformed = checkBodyShape(request);
    if (malformed !== null) {
      return reply.code(400).send(errorBody(malformed, request.id, responseMediaType(request)));
    }
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
    errorFormatter: (execution, ctx) =>
      answerErrors(execution, ctx.reply, {
        maxBodyBytes: opts.maxBodyBytes,
        suggestions: opts.limits.introspection,
      }),
  });
  opts.mercuriusHooks?.(app.graphql);
}

/** The GraphQL document of a POST body or a GET query string ('' when there is none). */
function documentOf(request: FastifyRequest): string {
  const from = request.method === 'GET' ? request.query : request.body;
  const query = (from as { query?: unknown } | null)?.query;
  return typeof query === 'string' ? query : '';
}

/** The variables of a POST body, or of a GET query string (JSON text there). */
function variablesOf(request: FastifyRequest): unknown {
  const from = request.method === 'GET' ? request.query : request.body;
  const variables = (from as { variables?: unknown } | null)?.variables;
  if (typeof variables !== 'string') return variables;
  try {
    return JSON.parse(variables) as unknown;
  } catch {
    return null; // Mercurius answers unreadable variables itself.
  }
}

/** The `operationName` a POST body or GET query string names, if any. */
function operationNameOf(request: FastifyRequest): string | null {
  const from = request.method === 'GET' ? request.query : request.body;
  const name = (from as { operationName?: unknown } | null)?.operationName;
  return typeof name === 'string' ? name : null;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
