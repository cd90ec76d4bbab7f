import type { Actor } from '../domain/actor.ts';
import {
  canUse,
  type GenerationKind,
  isVisible,
  type ModelDefinition,
  type ModelStatus,
} from '../domain/model.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import { type Cursors, type Page, pageOf } from '../shared/pagination.ts';

/** A model as one caller sees it: `accessible` is null without a credential. */
export interface ModelView {
  readonly model: ModelDefinition;
  readonly accessible: boolean | null;
}

export interface ModelFilter {
  kind?: GenerationKind | null | undefined;
  status?: ModelStatus | null | undefined;
}

/**
 * Models: public reads. The catalogue is configuration (built-ins plus `MODELS`), held in
 * memory. A ready model whose every backend is out of rotation reads `maintenance` until one
 * comes back (`down`, from PoolStatus). Elements (the built-in library and own ones) are
 * LibraryService's.
 */
export class CatalogueService {
  #models: ReadonlyMap<string, ModelDefinition>;
  readonly #cursors: Cursors;
  readonly #down: (modelId: string) => boolean;
  readonly #statusSet: (modelId: string) => ModelStatus | undefined;

  constructor(deps: {
    models: readonly ModelDefinition[];
    cursors: Cursors;
    /** Whether every backend of the model is out of rotation now. */
    down?: (modelId: string) => boolean;
    /** The status an admin set at runtime, over the configuration's. */
    statusSet?: (modelId: string) => ModelStatus | undefined;
  }) {
    this.#cursors = deps.cursors;
    this.#models = new Map(deps.models.map((m) => [m.modelId, m]));
    this.#down = deps.down ?? (() => false);
    this.#statusSet = deps.statusSet ?? (() => undefined);
  }

  /**
   * The catalogue reloaded (`models reload`): what is asked from now on. A running task keeps
   * the definition it was claimed with.
   */
  replace(models: readonly ModelDefinition[]): void {
    this.#models = new Map(models.map((m) => [m.modelId, m]));
  }

  listModels(
    actor: Actor | null,
    filter: ModelFilter,
    first?: number | null,
    after?: string | null,
  ): Page<ModelView> {
    const models = [...this.#models.values()]
      .map((m) => this.#now(m))
      .filter(
        (m) =>
          isVisible(m, actor) &&
          (filter.kind == null || m.kind === filter.kind) &&
          (filter.status == null || m.status === filter.status),
      );
    const page = pageOf(
      models,
      first,
      after,
      this.#cursors.for(actor?.accountId ?? null, 'models'),
    );
    return { ...page, nodes: page.nodes.map((model) => view(model, actor)) };
  }

  getModel(actor: Actor | null, modelId: string): ModelView {
    return view(this.model(actor, modelId), actor);
  }

  /**
   * The model as the caller may see it, or 140004 naming the field: unknown and private to
   * other accounts are the same answer, so an ID's existence is not disclosed.
   */
  model(actor: Actor | null, modelId: string): ModelDefinition {
    const configured = this.#models.get(modelId);
    const model = configured === undefined ? undefined : this.#now(configured);
    if (model === undefined || !isVisible(model, actor)) {
      throw new AppError(
        ErrorCode.NotFound,
        `No model "${modelId}"; listModels shows the catalogue.`,
        {
          field: 'modelId',
        },
      );
    }
    return model;
  }

  /**
   * The model if the actor may submit to it now: ready (else 110202, with its status) and
   * accessible to the account (else 110202).
   */
  usableModel(actor: Actor, modelId: string): ModelDefinition {
    const model = this.model(actor, modelId);
    if (model.status !== 'ready') {
      throw new AppError(
        ErrorCode.Forbidden,
        `Model "${modelId}" is ${model.status} and takes no submissions.`,
        {
          field: 'modelId',
          status: model.status,
        },
      );
    }
    if (!canUse(model, actor)) {
      throw new AppError(ErrorCode.Forbidden, `This account may not use model "${modelId}".`, {
        field: 'modelId',
      });
    }
    return model;
  }

  /**
   * The model as it stands now: with the status an admin set, if any; `maintenance` while it is
   * ready and every backend of it is out.
   */
  #now(configured: ModelDefinition): ModelDefinition {
    const set = this.#statusSet(configured.modelId);
    const model =
      set === undefined || set === configured.status ? configured : { ...configured, status: set };
    return model.status === 'ready' && this.#down(model.modelId)
      ? { ...model, status: 'maintenance' }
      : model;
  }

  /** Whether the catalogue has a model of this ID (whoever may see it). */
  has(modelId: string): boolean {
    return this.#models.has(modelId);
  }
}

function view(model: ModelDefinition, actor: Actor | null): ModelView {
  return { model, accessible: actor === null ? null : canUse(model, actor) };
}
