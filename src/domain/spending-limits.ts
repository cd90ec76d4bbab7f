import type { FieldProblem } from '../shared/errors.ts';
import type { Credential } from './actor.ts';
import { type DebitPart, maxBalance } from './credits.ts';
import type { GenerationKind } from './model.ts';

/** A calendar period in UTC: limits reset at midnight UTC, or on the first of the month. */
export type LimitPeriod = 'day' | 'month';
export const limitPeriods: readonly LimitPeriod[] = ['day', 'month'];

/** At most `credits` of `category` per `period`. */
export interface CreditLimit {
  readonly category: string;
  readonly period: LimitPeriod;
  readonly credits: number;
}

/**
 * What one credential (an API key, an MCP connection) may spend and on what. `null` kinds or
 * models: every kind, every model the account may use.
 */
export interface SpendingLimits {
  readonly credits: readonly CreditLimit[];
  readonly kinds: readonly GenerationKind[] | null;
  readonly modelIds: readonly string[] | null;
}

/**
 * Whose spending a credential is, within its account: an API key's ID, or `mcp:` and the
 * client ID of an MCP connection. ID tokens carry no limits: they are the person themselves.
 */
export function spenderOf(credential: Credential): string | null {
  switch (credential.kind) {
    case 'api_key':
      return credential.apiKeyId;
    case 'mcp_token':
      return mcpSpender(credential.clientId);
    case 'id_token':
      return null;
  }
}

/** Whose spending an MCP client's tokens are, within its account. */
export function mcpSpender(clientId: string): string {
  return `mcp:${clientId}`;
}

/** The start of the period holding `at` (UTC). */
export function periodStart(period: LimitPeriod, at: Date): Date {
  const start = new Date(
    Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), period === 'day' ? at.getUTCDate() : 1),
  );
  return start;
}

/** When the period holding `at` ends and its limit is whole again. */
export function periodEnd(period: LimitPeriod, at: Date): Date {
  const start = periodStart(period, at);
  return period === 'day'
    ? new Date(start.getTime() + 86_400_000)
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/** One limit's counter touched by a debit: the amount added, and the cap it must stay under. */
export interface SpendingCharge {
  readonly category: string;
  readonly period: LimitPeriod;
  readonly periodStart: Date;
  readonly amount: number;
  readonly cap: number;
}

/** What a submission adds to its credential's counters: none for an ID token or no limits. */
export interface SpendingPlan {
  readonly spender: string | null;
  readonly at: Date;
  readonly charges: readonly SpendingCharge[];
}

/** What a debit adds to each limit of its categories (none when no limit names them). */
export function spendingCharges(
  limits: readonly CreditLimit[],
  debit: readonly DebitPart[],
  at: Date,
): SpendingCharge[] {
  return limits.flatMap((limit) => {
    const amount = debit
      .filter((part) => part.category === limit.category)
      .reduce((sum, part) => sum + part.amount, 0);
    if (amount === 0) return [];
    return [
      {
        category: limit.category,
        period: limit.period,
        periodStart: periodStart(limit.period, at),
        amount,
        cap: limit.credits,
      },
    ];
  });
}

const maxEntries = 50;
const maxNameLength = 100;

/**
 * The problems of a set of limits as a client wrote it: credits 1 to a billion, each
 * (category, period) once, lists that are not empty (an empty list would allow nothing; leave
 * it out to allow everything). Whether the kinds and models exist is checked by the caller.
 */
export function limitProblems(limits: SpendingLimits, field = 'limits'): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (limits.credits.length > maxEntries) {
    problems.push({ field: `${field}.credits`, message: `at most ${maxEntries} limits` });
  }
  const seen = new Set<string>();
  limits.credits.forEach((limit, i) => {
    const at = `${field}.credits[${i}]`;
    if (limit.category.length === 0 || limit.category.length > maxNameLength) {
      problems.push({
        field: `${at}.category`,
        message: `must be 1 to ${maxNameLength} characters`,
      });
    }
    if (!limitPeriods.includes(limit.period)) {
      problems.push({ field: `${at}.period`, message: 'must be day or month' });
    }
    if (!Number.isInteger(limit.credits) || limit.credits < 1 || limit.credits > maxBalance) {
      problems.push({ field: `${at}.credits`, message: `must be 1 to ${maxBalance}` });
    }
    const key = `${limit.category}\u0000${limit.period}`;
    if (seen.has(key)) {
      problems.push({ field: at, message: `${limit.category} per ${limit.period} is set twice` });
    }
    seen.add(key);
  });
  for (const name of ['kinds', 'modelIds'] as const) {
    const list = limits[name];
    if (list === null) continue;
    if (list.length === 0 || list.length > maxEntries) {
      problems.push({
        field: `${field}.${name}`,
        message: `must list 1 to ${maxEntries} entries, or be left out to allow all`,
      });
    }
  }
  return problems;
}
