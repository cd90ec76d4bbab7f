import type { Actor } from '../domain/actor.ts';
import { fixedDebit, planDebit } from '../domain/credits.ts';
import { FinishCode } from '../domain/finish-code.ts';
import { defaultsOf, kindModule } from '../domain/kinds/kinds.ts';
import { type GenerationKind, type ModelDefinition, priceOf } from '../domain/model.ts';
import { spenderOf } from '../domain/spending-limits.ts';
import type { TaskEvents } from '../events/task-events.ts';
import type { CreditAmount, Metrics } from '../observability/metrics.ts';
import { annotate, currentCarrier, inSpan } from '../observability/tracing.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import {
  type ContentRow,
  findContent,
  findContentByIdempotencyKey,
} from '../store/content.store.ts';
import { listBalances } from '../store/credit.store.ts';
import type { Db, Queryable } from '../store/database.ts';
import { databaseSilent, outcomeUnknown } from '../store/database-errors.ts';
import { isOverLimit } from '../store/spending.store.ts';
import {
  assumedFunds,
  type Funds,
  insertSubmission,
  isOverdrawn,
  lockFunds,
  readFunds,
} from '../store/submission.store.ts';
import { findTask, findTasksOfContents } from '../store/task-queue.store.ts';
import type { CatalogueService } from './catalogue.service.ts';
import { type TaskView, toTaskView } from './generation-views.ts';
import type { LibraryService } from './library.service.ts';
import { referenceChecks } from './reference-checks.ts';
import type { SpendingLimitService } from './spending-limit.service.ts';
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

/** The IDs a client keeps after submitting (contract `GenerationSubmission`). */
export interface Submission {
  readonly contentId: string;
  readonly taskId: string;
  readonly deduplicated: boolean;
}

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
interface Prepared {
  readonly kind: GenerationKind;
  readonly model: ModelDefinition;
  /** The complete input as stored on the content and given to the engine. */
  readonly settings: object;
  readonly credits: number;
}

/** What `#charge` needs besides the prepared generation. */
type ChargeRequest = Prepared & {
  idempotencyKey: string | null;
  webhookUrl: string | null;
  inputHash: string;
};

/** Postgres: unique_violation — the idempotency index settled a race between two submissions. */
const uniqueViolation = '23505';

type FundsSource = (q: Queryable, accountId: string, spender: string | null) => Promise<Funds>;

/** A submission planned from assumed funds was not written: they were not so. */
class FundsNotAsAssumed extends Error {}

/** How many account and credential pairs {@link GenerationService} remembers as read-first. */
const readFirstLimit = 10_000;

/**
 * Generations of an account: submission (validated, priced, then charged and queued at
 * once), cost estimates with the same rules, results, and cancellation.
 */
export class GenerationService {
  readonly #deps: GenerationServiceDeps;
  /**
   * Account and credential pairs whose submission from assumed funds was not written (the
   * credential has limits, or the balance was missing or too small): this process reads their
   * funds first, rather than sending a statement that may write nothing. Oldest forgotten
   * first; a pair stays even once the reason is gone, which costs it only the round trip.
   */
  readonly #readFirst = new Set<string>();

  constructor(deps: GenerationServiceDeps) {
    this.#deps = deps;
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
    try {
      return await this.#submit(actor, request);
    } catch (error) {
      if ((error as { code?: unknown }).code !== uniqueViolation || request.idempotencyKey === null)
        throw error;
      // Another submission with the same key committed first: answer as if we had come second.
      return this.#submit(actor, request);
    }
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

  /**
   * Charges and queues in one statement, planned from the balances as read. When a balance fell
   * meanwhile (another submission spent it), the statement changes nothing and the submission
   * is planned again under row locks, where it cannot be overtaken. When a spending limit was
   * used up meanwhile, planning again answers with that limit's error.
   *
   * When the debit does not depend on the balances (one category pays) and no idempotency key
   * asks for a repeat to be found, the submission is planned from assumed funds instead of a
   * read, one round trip fewer; the statement itself checks what the read would have, and
   * writes nothing when they were not so, and the submission is then planned from a read.
   */
  async #submit(actor: Actor, request: ChargeRequest): Promise<Submission> {
    const { db } = this.#deps;
    // Made before any statement leaves: a submission whose answer is lost is found by them.
    const ids = { contentId: newId('cnt'), taskId: newId('tsk') };
    const sending = { started: false };
    const charge = (q: Queryable, fundsOf: FundsSource) =>
      this.#charge(q, actor, request, fundsOf, ids, sending);
    const attempt = () => {
      // Asked anew each time: a retry after a limit's race reads first.
      const assumed = this.#assumedFunds(actor, request);
      return charge(db, assumed === undefined ? readFunds : async () => assumed)
        .catch((error) => {
          if (!(error instanceof FundsNotAsAssumed)) throw error;
          this.#rememberReadFirst(actor);
          return charge(db, readFunds);
        })
        .catch((error) => {
          if (!isOverdrawn(error)) throw error;
          return db.transaction().execute((trx) => charge(trx, lockFunds));
        });
    };
    const charged = await attempt()
      .catch((error) => {
        if (!isOverLimit(error)) throw error;
        return attempt().catch((again) => {
          if (!isOverLimit(again)) throw again;
          throw new AppError(
            ErrorCode.InsufficientCredits,
            'A spending limit of this credential was reached by submissions at the same time.',
            { reason: 'spending_limit' },
          );
        });
      })
      .catch(async (error) => {
        if (!sending.started || !outcomeUnknown(error)) throw error;
        return { submission: await this.#reconcile(actor, ids, error), debited: [] };
      });
    if (charged.debited.length > 0) this.#deps.metrics?.countCredits('debit', charged.debited);
    if (!charged.submission.deduplicated) {
      // Not waited for: the submission is committed, and a worker that misses the wake-up
      // finds the task at its next poll. Events leave in the order published.
      void this.#announce({ type: 'queued', taskId: charged.submission.taskId });
    }
    return charged.submission;
  }

  /**
   * The truth about a submission whose answer was lost: the connection broke, or no answer came
   * in time, after its statement was sent, so it committed or it did not, and only the database
   * can say. Its content ID existed before the statement left: once the database answers, a
   * content found means the submission stands, charged once. Anything else — not found, or
   * still no answer — leaves the outcome unknown, and it is said so (100102, `charged: null`)
   * with the IDs to reconcile by, never "nothing was charged": PostgreSQL may still be
   * finishing the statement (at most DATABASE_TIMEOUT_MS, after which it cancels it).
   */
  async #reconcile(
    actor: Actor,
    ids: { contentId: string; taskId: string },
    lost: unknown,
  ): Promise<Submission> {
    if (!databaseSilent(lost)) {
      const found = await findContent(this.#deps.db, actor.accountId, ids.contentId).catch(
        () => undefined,
      );
      if (found !== undefined) {
        await this.#announce({ type: 'queued', taskId: ids.taskId });
        return { ...ids, deduplicated: false };
      }
    }
    throw new AppError(
      ErrorCode.IdentityUnavailable,
      `The database stopped answering while this generation was being submitted, so whether it was submitted and charged is not known. Before resubmitting, read content ${ids.contentId} (getContent): if it is still not found a few seconds from now, nothing was charged. Or resend with the same idempotencyKey, which cannot charge twice.`,
      { ...ids, charged: null, outcome: 'unknown' },
      { cause: lost },
    );
  }

  /** Funds to plan `request` from without a read, when it may be (see `#submit`). */
  #assumedFunds(actor: Actor, request: ChargeRequest): Funds | undefined {
    if (request.idempotencyKey !== null || this.#readFirst.has(readFirstKey(actor))) {
      return undefined;
    }
    const { creditOrder } = this.#deps;
    const debit = fixedDebit(request.credits, creditOrder, request.model.pricing.category);
    return debit === undefined ? undefined : assumedFunds(debit);
  }

  #rememberReadFirst(actor: Actor): void {
    if (this.#readFirst.size >= readFirstLimit) {
      this.#readFirst.delete(this.#readFirst.values().next().value!);
    }
    this.#readFirst.add(readFirstKey(actor));
  }

  async #charge(
    q: Queryable,
    actor: Actor,
    request: ChargeRequest,
    fundsOf: FundsSource,
    ids: { readonly contentId: string; readonly taskId: string },
    sending: { started: boolean },
  ): Promise<{ submission: Submission; debited: readonly CreditAmount[] }> {
    sending.started = false;
    const { model, settings, credits, idempotencyKey, inputHash } = request;
    const funds = await fundsOf(q, actor.accountId, spenderOf(actor.credential));
    const limits = this.#deps.spending.allowed(actor, model, funds.limits);
    if (idempotencyKey !== null) {
      const earlier = await findContentByIdempotencyKey(q, actor.accountId, idempotencyKey);
      if (earlier !== undefined) {
        return { submission: await this.#deduplicate(q, earlier, inputHash), debited: [] };
      }
    }
    const plan = planDebit(funds.balances, credits, this.#deps.creditOrder, model.pricing.category);
    if (!plan.ok) {
      throw new AppError(
        ErrorCode.InsufficientCredits,
        `This generation costs ${credits} credits; ${plan.available} are available.`,
        { required: credits, available: plan.available, category: model.pricing.category },
      );
    }
    const spending = await this.#deps.spending.plan(q, actor, limits, plan.parts);
    const { contentId, taskId } = ids;
    sending.started = true; // from here, a lost answer leaves the outcome unknown
    const written = await insertSubmission(q, {
      debits: plan.parts,
      spending,
      assumed: funds.assumed === true,
      content: {
        id: contentId,
        accountId: actor.accountId,
        kind: request.kind,
        modelId: model.modelId,
        input: { modelId: model.modelId, ...settings },
        inputHash,
        idempotencyKey,
        creditsCharged: credits,
        webhookUrl: request.webhookUrl,
      },
      task: { id: taskId, maxAttempts: this.#deps.maxAttempts, traceContext: currentCarrier() },
    });
    if (!written) throw new FundsNotAsAssumed();
    return { submission: { contentId, taskId, deduplicated: false }, debited: plan.parts };
  }

  async #deduplicate(trx: Queryable, earlier: ContentRow, inputHash: string): Promise<Submission> {
    if (earlier.input_hash !== inputHash) {
      throw new AppError(
        ErrorCode.IdempotencyConflict,
        'This idempotencyKey was used for a different input; use a new key or resend the original input.',
        { field: 'idempotencyKey', contentId: earlier.id },
      );
    }
    const [task] = await findTasksOfContents(trx, [earlier.id]);
    return { contentId: earlier.id, taskId: task!.id, deduplicated: true };
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

function readFirstKey(actor: Actor): string {
  return `${actor.accountId} ${spenderOf(actor.credential) ?? ''}`;
}
