import type { FastifyInstance } from 'fastify';
import { submitAndAwait } from './await-result.ts';
import { imageParamNames, imageRequest } from './image-request.ts';
import { actorOf, idempotencyKeyOf, type OpenAiContext } from './openai-context.ts';

/**
 * `POST /v1/images/generations`: one image generation, answered with its images once it has
 * finished, as `url` (a signed download URL, valid `MEDIA_URL_TTL_SECONDS`) or `b64_json`.
 */
export function imageRoute(app: FastifyInstance, { services, waitMs, fail }: OpenAiContext): void {
  app.post('/images/generations', async (request, reply) => {
    try {
      const actor = actorOf(request);
      const asked = imageRequest(request.body, idempotencyKeyOf(request));
      const content = await submitAndAwait(services, actor, 'image', asked.input, reply, waitMs);
      const base64Of = async (mediaId: string) =>
        (await services.media.read(actor, mediaId)).bytes.toString('base64');
      const data = [];
      for (const media of content.media) {
        data.push(
          asked.responseFormat === 'url'
            ? { url: media.download.url }
            : { b64_json: await base64Of(media.mediaId) },
        );
      }
      const settings = content.input as { width?: number; height?: number; format?: string };
      return {
        created: Math.floor(content.createdAt.getTime() / 1000),
        data,
        output_format: settings.format,
        size: `${settings.width}x${settings.height}`,
      };
    } catch (error) {
      return fail(request, reply, error, imageParamNames);
    }
  });
}
