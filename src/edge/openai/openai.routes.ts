import type { FastifyError, FastifyInstance } from 'fastify';
import { databaseUnavailable, outageError } from '../../services/database-outage.ts';
import { clientAddressKey } from '../../shared/client-address.ts';
import { AppError, ErrorCode, invalidInput } from '../../shared/errors.ts';
import { findTextProblem } from '../../shared/text-input.ts';
import type { Services } from '../services.ts';
import { imageRoute } from './images.route.ts';
import { modelsRoutes } from './models.route.ts';
import { idempotencyKeyOf, type OpenAiContext } from './openai-context.ts';
import { sendOpenAiError } from './openai-error.ts';
import { speechRoute } from './speech.route.ts';

/**
 * The OpenAI-compatible API (register with `prefix: '/v1'`): the same services, API keys,
 * credits and rate limits as GraphQL, in OpenAI's request and error shapes, so the official
 * SDKs and the tools built on them can use Atelier's models. Only API keys authenticate here
 * (`Authorization: Bearer svc_…`), through the one authenticator GraphQL uses; every request
 * counts one hit in the account's GraphQL window (per IP when unauthenticated).
 */
export async function openaiRoutes(
  app: FastifyInstance,
  opts: { services: Services; waitMs: number },
) {
  const { services } = opts;
  app.decorateRequest('openaiActor', null);

  const fail: OpenAiContext['fail'] = (request, reply, error, names) => {
    const status = (error as FastifyError).statusCode ?? 500;
    if (!(error instanceof AppError) && status < 500) {
      // Fastify's own refusals (a body that does not parse, too large, of another type) keep
      // the status it names for them, in the catalogue's code.
      const refused = new AppError(ErrorCode.InvalidInput, (error as Error).message);
      return sendOpenAiError(request, reply, refused, { status, retry: false });
    }
    const outage = outageError(error);
    if (outage !== null) app.outages.report(databaseUnavailable, error, { reqId: request.id });
    else if (!(error instanceof AppError)) request.log.error({ err: error }, 'unhandled error');
    const answer =
      error instanceof AppError
        ? error
        : (outage ??
          new AppError(ErrorCode.Internal, `Internal error; request id ${request.id}.`, {
            requestId: request.id,
          }));
    // Once this request has submitted a generation, the SDK's automatic retry would submit and
    // charge another unless the request carries an Idempotency-Key; with one, a retry finds the
    // same generation, so an unfinished one (160001) is worth waiting for again.
    const submitted = reply.getHeader('atelier-content-id') !== undefined;
    const worthRetrying = answer.retryable || answer.code === ErrorCode.GenerationPending;
    const retry = worthRetrying && (!submitted || idempotencyKeyOf(request) !== undefined);
    return sendOpenAiError(request, reply, answer, { names, retry });
  };

  app.setErrorHandler((error, request, reply) => fail(request, reply, error));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0];
    return fail(
      request,
      reply,
      new AppError(ErrorCode.NotFound, `No route ${request.method} ${path}.`),
    );
  });

  // NUL and unpaired surrogates are refused here, in this API's shape (text-input.plugin.ts).
  app.addHook('preValidation', async (request, reply) => {
    const problem = findTextProblem(request.body, '') ?? findTextProblem(request.params, '');
    if (problem !== null) return fail(request, reply, invalidInput([problem]));
  });

  app.addHook('preHandler', async (request, reply) => {
    const auth = await services.graphqlAuth.authenticate({
      authorization: request.headers.authorization,
    });
    const caller =
      auth.kind === 'actor' ? auth.actor.accountId : `ip:${clientAddressKey(request.ip)}`;
    const limited = await app.limits.operations('graphql', caller, 1);
    if (limited !== null) {
      const { retryAfterSeconds, message } = limited;
      reply.header('retry-after', retryAfterSeconds);
      return fail(
        request,
        reply,
        new AppError(ErrorCode.RateLimited, message, { retryAfterSeconds }),
      );
    }
    if (auth.kind === 'actor') {
      request.openaiActor = auth.actor;
      return;
    }
    if (auth.kind === 'anonymous') {
      reply.header('www-authenticate', 'Bearer');
      return fail(
        request,
        reply,
        new AppError(
          ErrorCode.Unauthenticated,
          'Authentication required: send Authorization: Bearer <Atelier API key (svc_…)>.',
        ),
      );
    }
    if (auth.error.code === ErrorCode.Unauthenticated)
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
    if (auth.error.retryable) reply.header('retry-after', 1);
    return fail(request, reply, auth.error);
  });

  const context: OpenAiContext = { services, waitMs: opts.waitMs, fail };
  modelsRoutes(app, context);
  imageRoute(app, context);
  speechRoute(app, context);
}
