import type { FastifyInstance } from 'fastify';
import { type UsageDimension, type UsageText, usageRequestOfText } from '../../domain/usage.ts';
import { clientAddressKey } from '../../shared/client-address.ts';
import { AppError, ErrorCode, invalidInput, isAppError } from '../../shared/errors.ts';
import type { Services } from '../services.ts';
import { sendAppError } from './error-reply.ts';
import { usageCsv } from './usage-csv.ts';

const anonymous =
  'Authentication required: send Authorization: Bearer <API key> or X-IdP-Token: <ID token>.';

/**
 * `GET /usage.csv?from&to&groupBy=day,model&accountId&modelId&kind&backend&credential`: the
 * usage report of GraphQL's `usageReport`, as a download. The same credentials (an API key, or
 * an ID token in `X-IdP-Token`), the same rules and codes, counted as one operation in the
 * caller's GraphQL window; errors are JSON as on every HTTP route.
 */
export async function usageRoutes(app: FastifyInstance, opts: { services: Services }) {
  const { services } = opts;
  app.get<{ Querystring: Record<string, string | string[]> }>(
    '/usage.csv',
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const idpToken = request.headers['x-idp-token'];
      const auth = await services.graphqlAuth.authenticate({
        authorization: request.headers.authorization,
        idpToken: Array.isArray(idpToken) ? idpToken[0] : idpToken,
      });
      const caller =
        auth.kind === 'actor' ? auth.actor.accountId : `ip:${clientAddressKey(request.ip)}`;
      const limited = await app.limits.operations('graphql', caller, 1);
      if (limited !== null) {
        reply.header('retry-after', limited.retryAfterSeconds);
        const refusal = new AppError(ErrorCode.RateLimited, limited.message, {
          retryAfterSeconds: limited.retryAfterSeconds,
        });
        return sendAppError(request, reply, refusal);
      }
      if (auth.kind === 'anonymous') {
        reply.header('www-authenticate', 'Bearer');
        return sendAppError(request, reply, new AppError(ErrorCode.Unauthenticated, anonymous));
      }
      if (auth.kind === 'refused') {
        if (auth.rejectRequest) reply.header('www-authenticate', 'Bearer error="invalid_token"');
        return sendAppError(request, reply, auth.error);
      }
      try {
        const usage = usageRequestOfText(textOf(request.query));
        const rows = await services.usage.report(auth.actor, usage);
        const name = `usage-${usage.from.toISOString().slice(0, 10)}-${usage.to.toISOString().slice(0, 10)}.csv`;
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${name}"`)
          .send(usageCsv(usage.groupBy as UsageDimension[], rows));
      } catch (error) {
        if (!isAppError(error)) throw error;
        return sendAppError(request, reply, error);
      }
    },
  );
}

/** The query's parameters as text; one given twice is refused rather than one of them picked. */
function textOf(query: Record<string, string | string[]>): UsageText {
  const twice = Object.keys(query).filter((name) => Array.isArray(query[name]));
  if (twice.length > 0) {
    throw invalidInput(twice.map((field) => ({ field, message: 'is given more than once' })));
  }
  return query as UsageText;
}
