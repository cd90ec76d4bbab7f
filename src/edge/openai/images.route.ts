import type { FastifyInstance } from 'fastify';
import { submitAndAwait } from './await-result.ts';
import { imageParamNames, imageRequest } from './image-request.ts';
import { actorOf, idempotencyKeyOf, type OpenAiContext } from './openai-context.ts';

/**
 * The values OpenAI's API document allows for the answer's optional `size` and
 * `output_format`: clients generated from it with strict enums fail to decode any other, so
 * another size (Atelier's models offer many) or format leaves the field out.
 */
const answerSizes = new Set(['1024x1024', '1024x1536', '1536x1024']);
const answerFormats = new Set(['png', 'webp', 'jpeg']);

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
      const size = `${settings.width}x${settings.height}`;
      return {
        created: Math.floor(content.createdAt.getTime() / 1000),
        data,
        ...(answerFormats.has(String(settings.format)) ? { output_format: settings.format } : {}),
        ...(answerSizes.has(size) ? { size } : {}),
      };
    } catch (error) {
      return fail(request, reply, error, imageParamNames);
    }
  });
}
