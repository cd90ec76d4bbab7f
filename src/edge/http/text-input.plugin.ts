import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { invalidInput } from '../../shared/errors.ts';
import { findTextProblem } from '../../shared/text-input.ts';
import { sendAppError } from './error-reply.ts';

/** Routes that check text themselves, in their own protocol's shape. */
const ownCheck = new Set(['/graphql', '/mcp']);

/**
 * Every other route (sign-in, OAuth, session, media, uploads) refuses text no edge accepts
 * (`textProblem`: NUL, unpaired surrogates) in its path parameters, query string and parsed
 * body before anything runs: `400` with 120001 naming the field, or RFC 6749's
 * `invalid_request` on the authorization server's routes. A binary body is not text.
 */
async function textInputPlugin(app: FastifyInstance) {
  app.addHook('preValidation', async (request, reply) => {
    const route = request.routeOptions.url ?? '';
    // The OpenAI-compatible API (`/v1/…`) checks in its own error shape too.
    if (ownCheck.has(route) || route.startsWith('/v1/')) return;
    const problem =
      findTextProblem(request.params, '') ??
      findTextProblem(request.query, '') ??
      findTextProblem(request.body, '');
    if (problem === null) return;
    reply.header('cache-control', 'no-store');
    if (route.startsWith('/oauth/'))
      return reply.code(400).send({
        error: 'invalid_request',
        error_description: `${problem.field} ${problem.message}.`,
      });
    return sendAppError(request, reply, invalidInput([problem]));
  });
}

/** Not encapsulated: the hook applies to every route registered after it. */
export const textInputHook = fp(textInputPlugin, { name: 'atelier-text-input' });
