import { type FieldProblem, invalidInput } from '../shared/errors.ts';
import { parseInstant } from '../shared/instant.ts';
import { FinishCode } from './finish-code.ts';
import { kindNames } from './kinds/kinds.ts';
import type { GenerationKind } from './model.ts';

/**
 * What a usage report may be grouped by. A submission is a content and its task:
 * - `day`: the UTC day it was submitted on (every measure is attributed to that day, even a
 *   run that ended on a later one);
 * - `account`, `model`, `kind`: the content's;
 * - `backend`: for submissions, the backend of the task's last run on a pool (null: a
 *   built-in engine, or not run yet); for provider calls and failures, each run's own backend
 *   (a failure before a failover stays on the backend that failed);
 * - `credential`: whose spending it was (`spenderOf`): an API key's ID, `mcp:` and an MCP
 *   client's ID, or null for a signed-in person (an ID token).
 */
export const usageDimensions = [
  'day',
  'account',
  'model',
  'kind',
  'backend',
  'credential',
] as const;
export type UsageDimension = (typeof usageDimensions)[number];

/** Narrows a report; each is an exact match. */
export interface UsageFilter {
  readonly accountId?: string | undefined;
  readonly modelId?: string | undefined;
  readonly kind?: GenerationKind | undefined;
  readonly backend?: string | undefined;
  readonly credential?: string | undefined;
}

/** A report's question: submissions in [from, to), grouped by `groupBy`, narrowed by `filter`. */
export interface UsageQuery {
  readonly from: Date;
  readonly to: Date;
  readonly groupBy: readonly UsageDimension[];
  readonly filter: UsageFilter;
}

/** A report's question as an edge received it: dimensions not yet checked. */
export interface UsageRequest {
  readonly from: Date;
  readonly to: Date;
  readonly groupBy: readonly string[];
  readonly filter?: UsageFilter | null | undefined;
}

/** One row of a report: the values of the grouped dimensions (null elsewhere) and measures. */
export interface UsageRow {
  /** Midnight UTC of the day, when grouped by day. */
  readonly day: Date | null;
  readonly accountId: string | null;
  readonly modelId: string | null;
  readonly kind: GenerationKind | null;
  readonly backend: string | null;
  readonly credential: string | null;
  /** Contents submitted (each has one task). */
  readonly submissions: number;
  /** Finished tasks by finish code (only codes with a count), by code. */
  readonly finishes: readonly { readonly code: number; readonly count: number }[];
  /** Credits the submissions were charged, all categories together. */
  readonly creditsCharged: number;
  /** Credits given back when they failed or were cancelled. */
  readonly creditsRefunded: number;
  /** Of finished tasks: first claim to finish, retries and waits between runs included. */
  readonly runSeconds: number;
  /** Runs on a pool's backends (`task_attempts`); built-in engines record none. */
  readonly providerCalls: number;
  /** Of those, runs that did not end `ok` (failed, failed over, error, lost, stopped). */
  readonly providerFailures: number;
}

/** The longest range one report covers: a year, leap day included. */
export const maxUsageRangeDays = 366;
/** The most rows one report returns; a bigger one is refused, to be narrowed. */
export const maxUsageRows = 10_000;

/** Every finish code there is, in order: the CSV's columns. */
export const finishCodes: readonly number[] = Object.values(FinishCode).sort((a, b) => a - b);

const dayMs = 86_400_000;

/** What is wrong with a report's question, every problem at once (empty: nothing). */
export function usageQueryProblems(query: {
  from: Date;
  to: Date;
  groupBy: readonly string[];
}): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const { from, to, groupBy } = query;
  if (Number.isNaN(from.getTime())) problems.push({ field: 'from', message: 'is not a date' });
  if (Number.isNaN(to.getTime())) problems.push({ field: 'to', message: 'is not a date' });
  if (problems.length === 0) {
    if (to.getTime() <= from.getTime()) {
      problems.push({ field: 'to', message: 'must be later than from (the range is [from, to))' });
    } else if (to.getTime() - from.getTime() > maxUsageRangeDays * dayMs) {
      problems.push({
        field: 'to',
        message: `must be at most ${maxUsageRangeDays} days after from`,
      });
    }
  }
  if (groupBy.length === 0) {
    problems.push({ field: 'groupBy', message: 'needs at least one dimension' });
  }
  const unknown = groupBy.filter((d) => !(usageDimensions as readonly string[]).includes(d));
  if (unknown.length > 0) {
    problems.push({
      field: 'groupBy',
      message: `${unknown.join(', ')}: not a dimension (there are ${usageDimensions.join(', ')})`,
    });
  }
  if (new Set(groupBy).size !== groupBy.length) {
    problems.push({ field: 'groupBy', message: 'names a dimension twice' });
  }
  return problems;
}

/** Dimension names from a comma-separated list (`day,model`), as the CSV URL and CLI take them. */
export function parseDimensions(list: string): string[] {
  return list
    .split(',')
    .map((d) => d.trim().toLowerCase())
    .filter((d) => d !== '');
}

/** A report's question as text (the CSV URL's query, the command line's options). */
export interface UsageText {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  /** Comma-separated; `day` when left out. */
  readonly groupBy?: string | undefined;
  readonly accountId?: string | undefined;
  readonly modelId?: string | undefined;
  readonly kind?: string | undefined;
  readonly backend?: string | undefined;
  readonly credential?: string | undefined;
}

/**
 * The request `text` spells, or 120001 naming each field that is missing or not of its type:
 * dates are ISO 8601 (`2026-11-01` is midnight UTC), the kind one there is. The range and the
 * dimensions themselves are checked with every other request's ({@link usageQueryProblems}).
 */
export function usageRequestOfText(text: UsageText): UsageRequest {
  const problems: FieldProblem[] = [];
  const date = (value: string | undefined, field: string): Date => {
    if (value === undefined || value === '') {
      problems.push({ field, message: 'is required (an ISO 8601 date or time)' });
      return new Date(0);
    }
    const parsed = parseInstant(value);
    if (parsed === null) {
      problems.push({
        field,
        message: 'is not an ISO 8601 date or time (2026-11-01, 2026-11-01T00:00:00Z)',
      });
      return new Date(Number.NaN);
    }
    return parsed;
  };
  const from = date(text.from, 'from');
  const to = date(text.to, 'to');
  const kind = text.kind === undefined || text.kind === '' ? undefined : text.kind;
  if (kind !== undefined && !(kindNames as readonly string[]).includes(kind)) {
    problems.push({ field: 'kind', message: `must be one of ${kindNames.join(', ')}` });
  }
  if (problems.length > 0) throw invalidInput(problems);
  const present = (value: string | undefined) => (value === '' ? undefined : value);
  return {
    from,
    to,
    groupBy: parseDimensions(text.groupBy ?? 'day'),
    filter: {
      accountId: present(text.accountId),
      modelId: present(text.modelId),
      kind: kind as GenerationKind | undefined,
      backend: present(text.backend),
      credential: present(text.credential),
    },
  };
}
