import type { FastifyInstance } from 'fastify';
import { AppError, ErrorCode, isAppError } from '../../shared/errors.ts';
import type { Services } from '../services.ts';
import { sendAppError } from './error-reply.ts';
import { contentStatusOf } from './error-status.ts';

/**
 * `PUT /uploads/:mediaId?exp&sig`: the signed URL from `createUpload` is the credential. The
 * body is taken as raw bytes whatever its Content-Type (the type is found by content); a body
 * above the configured limit is refused before it is read in full.
 */
export async function uploadRoutes(app: FastifyInstance, opts: { services: Services }) {
  const { uploads } = opts.services;
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    scope.put<{ Params: { mediaId: string }; Querystring: { exp?: string; sig?: string } }>(
      '/uploads/:mediaId',
      { bodyLimit: uploads.limits.maxBytes },
      async (request, reply) => {
        const { mediaId } = request.params;
        reply.header('cache-control', 'no-store');
        if (!uploads.verifyUrl(mediaId, request.query.exp, request.query.sig)) {
          const message = 'This upload link is invalid or has expired; call createUpload again.';
          return sendAppError(request, reply, new AppError(ErrorCode.Forbidden, message));
        }
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        try {
          const media = await uploads.receive(mediaId, body);
          return reply.code(200).send({ media });
        } catch (error) {
          if (!isAppError(error)) throw error;
          return sendAppError(request, reply, error, contentStatusOf(error));
        }
      },
    );
  });
}
