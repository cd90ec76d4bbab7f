import type { FastifyInstance } from 'fastify';
import type { BuiltinIdentityProvider } from '../../auth/builtin-idp.ts';
import type { SignInThrottle } from '../../rate-limits/sign-in-throttle.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { sendAppError } from './error-reply.ts';
import { describeLimit, sendRateLimited } from './rate-limits.ts';

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
 * The built-in identity provider over HTTP: discovery, public keys, and sign-in. Sign-in is
 * limited per IP (all attempts) and per (email, IP) (failures); failures for an email from
 * anywhere only slow its sign-ins down (`SignInThrottle`), so nobody can lock a person out.
 */
export async function idpRoutes(
  app: FastifyInstance,
  opts: { idp: BuiltinIdentityProvider; throttle: SignInThrottle },
) {
  const { idp, throttle } = opts;

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
    { schema: { body: signInBody }, onRequest: app.limits.auth('sign-in') },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { email, password } = request.body;
      const refused = await throttle.admit(email, request.ip);
      if (refused !== null) {
        const limit = 'too many failed sign-ins for this email from this address';
        return sendRateLimited(request, reply, refused.retryAfterSeconds, limit);
      }
      try {
        const { idToken, expiresAt } = await idp.signIn(email, password);
        await throttle.succeeded(email, request.ip);
        return { idToken, expiresAt: expiresAt.toISOString() };
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        if (error.code === ErrorCode.IdentityUnavailable) {
          // The password could not be checked at all: no failure of the person's.
          await throttle.succeeded(email, request.ip);
          throw error;
        }
        const failures = await throttle.failed(email, request.ip);
        if (failures !== null) describeLimit(reply, failures);
        return sendAppError(request, reply, error);
      }
    },
  );
}
