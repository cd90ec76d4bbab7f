import path from 'node:path';
import send from '@fastify/send';
import type { FastifyInstance } from 'fastify';
import { ErrorCode } from '../../shared/errors.ts';
import type { Services } from '../services.ts';

/**
 * `GET /media/:mediaId?exp&sig`: the signed URL is the credential. A wrong or expired
 * signature gets 403 and no hint of whether the media exists. Serves the stored type, a
 * download filename, ETag / Last-Modified, and Range requests (video players seek); with media
 * on an object store, a `302` to a presigned URL that expires at the same moment.
 */
export async function mediaRoutes(app: FastifyInstance, opts: { services: Services }) {
  app.get<{ Params: { mediaId: string }; Querystring: { exp?: string; sig?: string } }>(
    '/media/:mediaId',
    async (request, reply) => {
      const { mediaId } = request.params;
      const download = await opts.services.media.resolveDownload(
        mediaId,
        request.query.exp,
        request.query.sig,
      );
      if (download === null) {
        return reply
          .code(403)
          .header('cache-control', 'no-store')
          .send({
            error: {
              code: ErrorCode.Forbidden,
              message:
                'This download link is invalid or has expired; read the content again for a fresh one.',
              requestId: request.id,
            },
          });
      }
      if ('redirect' in download) {
        // On the object store: a presigned URL that expires with this one.
        return reply.code(302).header('cache-control', 'no-store').redirect(download.redirect);
      }
      const result = await send(request.raw, `/${path.basename(download.path)}`, {
        root: path.dirname(download.path),
        contentType: false,
        cacheControl: false,
        dotfiles: 'deny',
      });
      if (result.type !== 'file') {
        return reply.code(result.statusCode === 404 ? 404 : 500).send({
          error: {
            code: ErrorCode.NotFound,
            message: 'The media file is missing.',
            requestId: request.id,
          },
        });
      }
      reply.code(result.statusCode).headers(result.headers);
      if (result.statusCode < 300) {
        reply
          .header('content-type', download.mimeType)
          .header('content-disposition', `attachment; filename="${download.filename}"`)
          // The URL expires; whoever holds it may cache the bytes privately until then.
          .header('cache-control', 'private, max-age=300');
      }
      return reply.send(result.stream);
    },
  );
}
