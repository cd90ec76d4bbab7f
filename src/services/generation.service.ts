import type { Actor } from '../domain/actor.ts';
import { planDebit } from '../domain/credits.ts';
import { FinishCode } from '../domain/finish-code.ts';
import { defaultsOf, kindModule } from '../domain/kinds/kinds.ts';
import { type GenerationKind, type ModelDefinition, priceOf } from '../domain/model.ts';
import type { TaskEvents } from '../events/task-events.ts';
import type { Metrics } from '../observability/metrics.ts';
import { annotate, inSpan } from '../observability/tracing.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { listBalances } from '../store/credit.store.ts';
import type { Db } from '../store/database.ts';
import { findTask } from '../store/task-queue.store.ts';
import type { CatalogueService } from './catalogue.service.ts';
import { type TaskView, toTaskView } from './generation-views.ts';
import type { LibraryService } from './library.service.ts';
import { referenceChecks } from './reference-checks.ts';
import type { SpendingLimitService } from './spending-limit.service.ts';
import { type ChargeRequest, type Submission, SubmissionCharges } from './submission-charges.ts';
import {
  hashInput,
  newSeed,
  optionalKey,
  optionalMaxCredits,
  optionalString,
  requireString,
  settled,
} from './submission-input.ts';
import type { TaskFinisher } from './task-finisher.ts';
import type { VoiceService } from './voice.service.ts';
import type { WebhookService } from './webhook.service.ts';

export type { Submission } from './submission-charges.ts';

export interface CostEstimate {
  readonly credits: number;
  readonly category: string | null;
  readonly affordable: boolean | null;
}

export interface GenerationServiceDeps {
  db: Db;
  catalogue: CatalogueService;
  library: LibraryService;
  voices: VoiceService;
  events: TaskEvents;
  /** Categories spent, in order, by models that name none. */
  creditOrder: readonly string[];
  maxAttempts: number;
  /** Debits, counted after their transaction commits (default: none). */
  metrics?: Metrics;
  /** Cancellation finishes through it, like every other finish. */
  finisher: TaskFinisher;
  /** The limits of the API key or MCP connection submitting. */
  spending: SpendingLimitService;
  /** Checks a generation's own webhookUrl. */
  webhooks: Pick<WebhookService, 'checkOneOffUrl'>;
}

/** A validated generation with its model and price, ready to charge and queue. */
type Prepared = Omit<ChargeRequest, 'idempotencyKey' | 'webhookUrl' | 'inputHash'>;

/**
 * Generations of an account: submission (validated, priced, then charged and queued at
 * once), cost estimates with the same rules, results, and cancellation.
 */
export class GenerationService {
  readonly #deps: GenerationServiceDeps;
  readonly #charges: SubmissionCharges;

  constructor(deps: GenerationServiceDeps) {
    this.#deps = deps;
    this.#charges = new SubmissionCharges({ ...deps, announce: (event) => this.#announce(event) });
  }

  /**
   * Validates, prices, charges and queues one generation. Everything the input names (model,
   * elements, media, avatar, voice) is checked against the caller's account before any charge.
   */
  async submit(
    actor: Actor,
    kind: GenerationKind,
    input: Readonly<Record<string, unknown>>,
  ): Promise<Submission> {
    // The span whose context the task carries: the worker's spans, in any process, join it.
    return inSpan('atelier.submit', { attributes: { 'atelier.kind': kind } }, async (span) => {
      const submission = await this.#submitTraced(actor, kind, input);
      span.setAttributes({
        'atelier.task_id': submission.taskId,
        'atelier.content_id': submission.contentId,
        'atelier.deduplicated': submission.deduplicated,
      });
      return submission;
    });
  }

  async #submitTraced(
    actor: Actor,
    kind: GenerationKind,
    input: Readonly<Record<string, unknown>>,
  ): Promise<Submission> {
    const prepared = await this.#prepare(actor, kind, input, 'submit');
    annotate({ 'atelier.model_id': prepared.model.modelId });
    const maxCredits = optionalMaxCredits(input.maxCredits);
    if (maxCredits !== null && prepared.credits > maxCredits) {
      throw new AppError(
        ErrorCode.InsufficientCredits,
        `This generation costs ${prepared.credits} credits, more than its maxCredits of ${maxCredits}.`,
        {
          reason: 'max_credits',
          field: 'maxCredits',
          required: prepared.credits,
          available: maxCredits,
        },
      );
    }
    const webhookUrl = optionalString(input.webhookUrl, 'webhookUrl');
    if (webhookUrl !== null) await this.#deps.webhooks.checkOneOffUrl(actor, webhookUrl);
    const request: ChargeRequest = {
      ...prepared,
      webhookUrl,
      idempotencyKey: optionalKey(input.idempotencyKey),
      // Defaults first: a left-out field and its default are the same input on every edge.
      inputHash: hashInput({ ...defaultsOf(kind), ...input }),
    };
    return this.#charges.submit(actor, request);
  }

  /**
   * The model, the complete settings to store and their price. For a submission every
   * reference is checked; an estimate checks only what the price depends on.
   */
  async #prepare(
    actor: Actor | null,
    kind: GenerationKind,
    raw: Readonly<Record<string, unknown>>,
    purpose: 'submit' | 'estimate',
  ): Promise<Prepared> {
    const modelId = requireString(raw.modelId, 'modelId');
    const { catalogue, library, voices } = this.#deps;
    const model =
      actor === null ? catalogue.model(null, modelId) : catalogue.usableModel(actor, modelId);
    if (model.kind !== kind) {
      throw invalidInput([
        { field: 'modelId', message: `"${modelId}" is a ${model.kind} model, not a ${kind} model` },
      ]);
    }
    const kindOf = kindModule(kind);
    const settings = settled(kindOf.validate(model, raw, newSeed));
    const resolved = await kindOf.resolve(
      model,
      settings,
      referenceChecks({ library, voices }, actor, purpose),
    );
    return {
      kind,
      model,
      settings: resolved.settings as object,
      credits: priceOf(model, resolved.units),
    };
  }

  /** What a generation would cost, by the same validation and pricing as a submission. */
  async estimate(actor: Actor | null, kind: GenerationKind, input: unknown): Promise<CostEstimate> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw invalidInput([
        { field: 'input', message: 'must be the object a generate mutation takes' },
      ]);
    }
    const raw = input as Record<string, unknown>;
    const { model, credits } = await this.#prepare(actor, kind, raw, 'estimate');
    optionalKey(raw.idempotencyKey); // the same rule as a submission, though nothing is kept
    if (actor === null) return { credits, category: model.pricing.category, affordable: null };
    return this.#affordable(actor, model, credits);
  }

  async #affordable(actor: Actor, model: ModelDefinition, credits: number): Promise<CostEstimate> {
    const balances = new Map(
      (await listBalances(this.#deps.db, actor.accountId)).map((b) => [b.category, b.amount]),
    );
    const plan = planDebit(balances, credits, this.#deps.creditOrder, model.pricing.category);
    return { credits, category: model.pricing.category, affordable: plan.ok };
  }

  /**
   * Cancels a queued or running task: it finishes at once with code 2 and its credits are
   * refunded; a worker running it loses its lease and aborts. A finished task is returned
   * unchanged.
   */
  async cancelTask(actor: Actor, taskId: string): Promise<TaskView> {
    const task = await findTask(this.#deps.db, actor.accountId, taskId);
    if (task === undefined) throw notFound('task', taskId, 'taskId');
    if (task.status === 'finished') return toTaskView(task);
    const finished = await this.#deps.finisher.finish(
      task.id,
      { kind: 'unfinished' },
      { code: FinishCode.Cancelled, message: 'Cancelled by the client.' },
    );
    if (finished === undefined) {
      // Finished meanwhile, by its worker: answer with that.
      const now = await findTask(this.#deps.db, actor.accountId, taskId);
      return toTaskView(now!);
    }
    return toTaskView(finished);
  }

  /** Events are a wake-up call; workers poll as well, so a lost one only delays. */
  async #announce(event: Parameters<TaskEvents['publish']>[0]): Promise<void> {
    try {
      await this.#deps.events.publish(event);
    } catch {
      // The submission is committed; a failed notification must not turn it into an error.
    }
  }
}

function notFound(what: string, id: string, field: string): AppError {
  return new AppError(ErrorCode.NotFound, `No ${what} "${id}" in this account.`, { field });
}
