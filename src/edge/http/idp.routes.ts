import type { FastifyInstance } from 'fastify';
import type { BuiltinIdentityProvider } from '../../auth/builtin-idp.ts';
import { AppError } from '../../shared/errors.ts';

const signInBody = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;

/**
 * The built-in identity provider over HTTP: discovery, public keys, and sign-in. Sign-in
 * attempts are limited per email address (10 per 15 minutes), so guessing one account's
 * password is slow whichever addresses the guesses come from.
 */
export async function idpRoutes(
  app: FastifyInstance,
  opts: { idp: BuiltinIdentityProvider; signInLimit: number },
) {
  const { idp } = opts;

  app.get('/idp/.well-known/openid-configuration', async (_request, reply) =>
    reply
      .header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .send(idp.discovery()),
  );

  app.get('/idp/jwks', async (_request, reply) =>
    reply
      .header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .send(idp.jwks),
  );

  app.post<{ Body: { email: string; password: string } }>(
    '/idp/sign-in',
    {
      schema: { body: signInBody },
      onRequest: app.limits.auth('sign-in'),
      // Per email once the body is read: 15 minutes, whatever the configured window.
      preHandler: app.limits.keyed('sign-in:email', opts.signInLimit, 15 * 60_000, (request) =>
        (request.body as { email: string }).email.trim().toLowerCase(),
      ),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        const { idToken, expiresAt } = await idp.signIn(request.body.email, request.body.password);
        return { idToken, expiresAt: expiresAt.toISOString() };
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return reply
          .code(401)
          .send({ error: { code: error.code, message: error.message, requestId: request.id } });
      }
    },
  );
}
