import type { FastifyInstance } from 'fastify';
import type { ModelDefinition } from '../../domain/model.ts';
import { maxPageSize } from '../../shared/pagination.ts';
import { actorOf, type OpenAiContext } from './openai-context.ts';

/**
 * `GET /v1/models` and `GET /v1/models/{id}`: the catalogue as the caller sees it (models
 * private to other accounts are neither listed nor found), in OpenAI's list shape. The
 * catalogue keeps no creation time, so `created` is 0.
 */
export function modelsRoutes(app: FastifyInstance, { services }: OpenAiContext): void {
  app.get('/models', async (request) => {
    const actor = actorOf(request);
    const data = [];
    let after: string | null = null;
    for (;;) {
      const page = services.catalogue.listModels(actor, {}, maxPageSize, after);
      data.push(...page.nodes.map((view) => modelObject(view.model)));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    return { object: 'list', data };
  });

  app.get<{ Params: { id: string } }>('/models/:id', async (request) =>
    modelObject(services.catalogue.model(actorOf(request), request.params.id)),
  );
}

function modelObject(model: ModelDefinition) {
  return { id: model.modelId, object: 'model', created: 0, owned_by: 'atelier' };
}
