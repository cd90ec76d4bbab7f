import path from 'node:path';
import send, { type SendResult } from '@fastify/send';
import type { FastifyInstance } from 'fastify';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import type { Services } from '../services.ts';
import { sendAppError } from './error-reply.ts';

const expiredLink =
  'This download link is invalid or has expired; read the content again for a fresh one.';

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
        reply.header('cache-control', 'no-store');
        return sendAppError(request, reply, new AppError(ErrorCode.Forbidden, expiredLink));
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
        // Anything but a missing file (a permission, a directory) is the server's fault: the
        // error handler logs it under the request id and answers 190000.
        if (result.statusCode !== 404) throw fileError(result);
        const missing = new AppError(ErrorCode.NotFound, 'The media file is missing.');
        return sendAppError(request, reply, missing);
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

function fileError(result: SendResult): Error {
  if (result.type === 'error') return result.metadata.error;
  return new Error(`Media path is a ${result.type}, not a file: ${result.metadata.path}`);
}
