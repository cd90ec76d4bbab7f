import type { Actor } from '../domain/actor.ts';
import { fixedDebit, planDebit } from '../domain/credits.ts';
import type { GenerationKind, ModelDefinition } from '../domain/model.ts';
import { spenderOf } from '../domain/spending-limits.ts';
import type { TaskEvent } from '../events/task-events.ts';
import type { CreditAmount, Metrics } from '../observability/metrics.ts';
import { currentCarrier } from '../observability/tracing.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import {
  type ContentRow,
  findContent,
  findContentByIdempotencyKey,
} from '../store/content.store.ts';
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
import { findTasksOfContents } from '../store/task-queue.store.ts';
import type { SpendingLimitService } from './spending-limit.service.ts';

// A generation's charge and queueing, once it is validated and priced (GenerationService):
// planned from the funds as read, assumed or locked, written in one statement, retried or
// reconciled when the database raced or went silent.

/** The IDs a client keeps after submitting (contract `GenerationSubmission`). */
export interface Submission {
  readonly contentId: string;
  readonly taskId: string;
  readonly deduplicated: boolean;
}

export interface SubmissionChargesDeps {
  db: Db;
  /** Categories spent, in order, by models that name none. */
  creditOrder: readonly string[];
  maxAttempts: number;
  /** Debits, counted after their transaction commits (default: none). */
  metrics?: Metrics;
  /** The limits of the API key or MCP connection submitting. */
  spending: SpendingLimitService;
  /** Publishes a task event; a failure must not turn a committed submission into an error. */
  announce(event: TaskEvent): Promise<void>;
}

/** A validated, priced generation and what its submission keeps beside it. */
export interface ChargeRequest {
  readonly kind: GenerationKind;
  readonly model: ModelDefinition;
  /** The complete input as stored on the content and given to the engine. */
  readonly settings: object;
  readonly credits: number;
  readonly idempotencyKey: string | null;
  readonly webhookUrl: string | null;
  readonly inputHash: string;
}

/** Postgres: unique_violation — the idempotency index settled a race between two submissions. */
const uniqueViolation = '23505';

type FundsSource = (q: Queryable, accountId: string, spender: string | null) => Promise<Funds>;

/** A submission planned from assumed funds was not written: they were not so. */
class FundsNotAsAssumed extends Error {}

/** How many account and credential pairs {@link SubmissionCharges} remembers as read-first. */
const readFirstLimit = 10_000;

/** Charges and queues validated generations: each one at most once, whatever races it. */
export class SubmissionCharges {
  readonly #deps: SubmissionChargesDeps;
  /**
   * Account and credential pairs whose submission from assumed funds was not written (the
   * credential has limits, or the balance was missing or too small): this process reads their
   * funds first, rather than sending a statement that may write nothing. Oldest forgotten
   * first; a pair stays even once the reason is gone, which costs it only the round trip.
   */
  readonly #readFirst = new Set<string>();

  constructor(deps: SubmissionChargesDeps) {
    this.#deps = deps;
  }

  /** Charges and queues `request`, or finds the submission its idempotency key names. */
  async submit(actor: Actor, request: ChargeRequest): Promise<Submission> {
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
      void this.#deps.announce({ type: 'queued', taskId: charged.submission.taskId });
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
        await this.#deps.announce({ type: 'queued', taskId: ids.taskId });
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
}

function readFirstKey(actor: Actor): string {
  return `${actor.accountId} ${spenderOf(actor.credential) ?? ''}`;
}
