import type { FastifyInstance } from 'fastify';
import { submitAndAwait } from './await-result.ts';
import { actorOf, idempotencyKeyOf, type OpenAiContext } from './openai-context.ts';
import { speechParamNames, speechRequest } from './speech-request.ts';

/**
 * `POST /v1/audio/speech`: one speech generation, answered with the audio file itself once it
 * has finished, its Content-Type saying the format.
 */
export function speechRoute(app: FastifyInstance, { services, waitMs, fail }: OpenAiContext): void {
  app.post('/audio/speech', async (request, reply) => {
    try {
      const actor = actorOf(request);
      const input = speechRequest(request.body, idempotencyKeyOf(request));
      const content = await submitAndAwait(services, actor, 'speech', input, reply, waitMs);
      const [audio] = content.media;
      if (audio === undefined)
        throw new Error(`speech ${content.contentId} finished without audio`);
      const file = await services.media.read(actor, audio.mediaId);
      return reply.type(file.mimeType).send(file.bytes);
    } catch (error) {
      return fail(request, reply, error, speechParamNames);
    }
  });
}
