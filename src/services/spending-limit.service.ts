import type { Actor } from '../domain/actor.ts';
import { auditActorOf } from '../domain/audit.ts';
import type { DebitPart } from '../domain/credits.ts';
import { kindNames } from '../domain/kinds/kinds.ts';
import type { ModelDefinition } from '../domain/model.ts';
import {
  type CreditLimit,
  type LimitPeriod,
  limitProblems,
  mcpSpender,
  periodEnd,
  periodStart,
  type SpendingCharge,
  type SpendingLimits,
  type SpendingPlan,
  spenderOf,
  spendingCharges,
} from '../domain/spending-limits.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, type FieldProblem, invalidInput } from '../shared/errors.ts';
import { appendAudit } from '../store/audit.store.ts';
import type { Db, Queryable } from '../store/database.ts';
import {
  listSpendingLimits,
  type SpentRow,
  setSpendingLimits,
  spentIn,
} from '../store/spending.store.ts';
import type { CatalogueService } from './catalogue.service.ts';

/** One credit limit as listings show it (contract addition `CreditLimit`). */
export interface CreditLimitView extends CreditLimit {
  readonly spent: number;
  readonly remaining: number;
  readonly resetsAt: Date;
}

/** A credential's limits with what it has spent in the current periods. */
export interface SpendingLimitsView extends Omit<SpendingLimits, 'credits'> {
  readonly credits: readonly CreditLimitView[];
}

/**
 * Spending limits of API keys and MCP connections (issue 21): set and shown here, checked
 * before a submission is charged, and enforced exactly by the submission statement itself
 * (`spending_counters_within_cap`).
 */
export class SpendingLimitService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #catalogue: CatalogueService;

  constructor(deps: { db: Db; clock: Clock; catalogue: CatalogueService }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#catalogue = deps.catalogue;
  }

  /**
   * Replaces a spender's limits (`null`: no limits). `field` names the argument in errors.
   * Every model named must be one the account may use.
   */
  async set(
    actor: Actor,
    spender: string,
    limits: SpendingLimits | null,
    field: string,
    q: Queryable = this.#db,
  ): Promise<void> {
    if (limits !== null) {
      const problems = [
        ...limitProblems(limits, field),
        ...this.#unknownNames(actor, limits, field),
      ];
      if (problems.length > 0) throw invalidInput(problems);
    }
    if (q === this.#db) {
      await this.#db.transaction().execute((trx) => this.set(actor, spender, limits, field, trx));
      return;
    }
    await setSpendingLimits(q, actor.accountId, spender, limits, this.#clock.now());
    const mcp = spender.startsWith(mcpSpender(''));
    await appendAudit(q, this.#clock.now(), auditActorOf(actor), {
      accountId: actor.accountId,
      action: mcp ? 'mcp.limits_changed' : 'api_key.limits_changed',
      target: mcp ? spender.slice(mcpSpender('').length) : spender,
      detail: { limits },
    });
  }

  #unknownNames(actor: Actor, limits: SpendingLimits, field: string): FieldProblem[] {
    const problems: FieldProblem[] = [];
    limits.kinds?.forEach((kind, i) => {
      if (!kindNames.includes(kind))
        problems.push({ field: `${field}.kinds[${i}]`, message: `no kind "${kind}"` });
    });
    limits.modelIds?.forEach((modelId, i) => {
      try {
        this.#catalogue.model(actor, modelId);
      } catch {
        problems.push({ field: `${field}.modelIds[${i}]`, message: `no model "${modelId}"` });
      }
    });
    return problems;
  }

  /** The limits of each spender of the account that has some, with what each has spent. */
  async views(
    accountId: string,
    q: Queryable = this.#db,
  ): Promise<Map<string, SpendingLimitsView>> {
    const now = this.#clock.now();
    const limits = await listSpendingLimits(q, accountId);
    if (limits.length === 0) return new Map();
    const spent = await spentIn(q, accountId, currentPeriods(now));
    return new Map(
      limits.map((l) => {
        const credits = l.credits.map((limit) => {
          const used = spentOn(spent, l.spender, limit);
          return {
            ...limit,
            spent: used,
            remaining: Math.max(0, limit.credits - used),
            resetsAt: periodEnd(limit.period, now),
          };
        });
        return [l.spender, { credits, kinds: l.kinds, modelIds: l.modelIds }];
      }),
    );
  }

  /**
   * The caller's limits (`stored`, as read with the balances), refusing at once (110202) a kind
   * or model they do not allow. `null` when the credential has none (an ID token never has).
   */
  allowed(
    actor: Actor,
    model: ModelDefinition,
    stored: SpendingLimits | undefined,
  ): SpendingLimits | null {
    if (spenderOf(actor.credential) === null || stored === undefined) return null;
    const { kinds, modelIds } = stored;
    if (
      (kinds !== null && !kinds.includes(model.kind)) ||
      (modelIds !== null && !modelIds.includes(model.modelId))
    ) {
      throw new AppError(
        ErrorCode.Forbidden,
        `This ${credentialName(actor)} may not use the ${model.kind} model "${model.modelId}".`,
        { field: 'modelId', allowedKinds: kinds, allowedModelIds: modelIds },
      );
    }
    return stored;
  }

  /**
   * What charging `debit` adds to the caller's limits; throws 130001 when it would exceed one,
   * as read now. The submission statement enforces the same caps against concurrent spending.
   */
  async plan(
    q: Queryable,
    actor: Actor,
    limits: SpendingLimits | null,
    debit: readonly DebitPart[],
  ): Promise<SpendingPlan> {
    const spender = spenderOf(actor.credential);
    const at = this.#clock.now();
    if (spender === null || limits === null) return { spender, at, charges: [] };
    const charges = spendingCharges(limits.credits, debit, at);
    if (charges.length > 0) await this.#check(q, actor, spender, charges, at);
    return { spender, at, charges };
  }

  /** Throws the 130001 of the first charge that its limit's counter cannot take. */
  async #check(
    q: Queryable,
    actor: Actor,
    spender: string,
    charges: readonly SpendingCharge[],
    at: Date,
  ): Promise<void> {
    const spent = await spentIn(q, actor.accountId, currentPeriods(at), spender);
    for (const charge of charges) {
      const used = spentOn(spent, spender, charge);
      const remaining = Math.max(0, charge.cap - used);
      if (charge.amount <= remaining) continue;
      const resetsAt = periodEnd(charge.period, at);
      throw new AppError(
        ErrorCode.InsufficientCredits,
        `This ${credentialName(actor)} may spend ${charge.cap} ${charge.category} credits per ` +
          `${charge.period}; ${remaining} remain until ${resetsAt.toISOString()}, and this ` +
          `generation costs ${charge.amount}.`,
        {
          reason: 'spending_limit',
          required: charge.amount,
          available: remaining,
          category: charge.category,
          period: charge.period,
          limit: charge.cap,
          resetsAt: resetsAt.toISOString(),
        },
      );
    }
  }
}

/** What a spender's counter of the limit's category and period holds now (0: no counter yet). */
function spentOn(
  rows: readonly SpentRow[],
  spender: string,
  limit: { readonly category: string; readonly period: LimitPeriod },
): number {
  return (
    rows.find(
      (r) => r.spender === spender && r.category === limit.category && r.period === limit.period,
    )?.spent ?? 0
  );
}

function currentPeriods(at: Date): { day: Date; month: Date } {
  return { day: periodStart('day', at), month: periodStart('month', at) };
}

function credentialName(actor: Actor): string {
  return actor.credential.kind === 'api_key' ? 'API key' : 'MCP connection';
}
