import type { parseArgs } from 'node:util';
import { invalidInput } from '../shared/errors.ts';
import { parseInstant } from '../shared/instant.ts';

// The command line's options and the checks its values pass before a command runs. A value a
// service judges (an amount, a time) is refused as the JSON error 120001 naming its field; a
// line that cannot be run at all (a missing option) is a UsageError, printed with the usage.

/** Thrown for a command line that cannot be run; printed with the usage. */
export class UsageError extends Error {}

export const options = {
  alias: { type: 'string' },
  credits: { type: 'string', multiple: true },
  'api-key-access': { type: 'boolean' },
  role: { type: 'string' },
  account: { type: 'string' },
  category: { type: 'string' },
  amount: { type: 'string' },
  status: { type: 'string' },
  name: { type: 'string' },
  'expires-in': { type: 'string' },
  email: { type: 'string' },
  first: { type: 'string' },
  after: { type: 'string' },
  reason: { type: 'string' },
  key: { type: 'string' },
  action: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  'group-by': { type: 'string' },
  model: { type: 'string' },
  kind: { type: 'string' },
  backend: { type: 'string' },
  credential: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type Values = ReturnType<
  typeof parseArgs<{ options: typeof options; allowPositionals: true }>
>['values'];

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required.`);
  return value;
}

export function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}.`);
  }
  return value as T;
}

/**
 * A whole number, negative ones included: what is allowed (a grant adds at least 1) is the
 * service's rule, answered as the JSON error (120001) every bad value gets.
 */
export function integer(value: string, field: string): number {
  if (!/^-?\d{1,15}$/.test(value))
    throw invalidInput([{ field, message: 'must be a whole number' }]);
  return Number(value);
}

/** An ISO 8601 time such as 2031-01-01 or 2031-01-01T12:00:00Z; 120001 naming the field. */
export function instant(value: string, field: string): Date {
  const at = parseInstant(value);
  if (at === null)
    throw invalidInput([{ field, message: 'must be a time such as 2031-01-01T00:00:00Z' }]);
  return at;
}

/** `--credits standard=100 --credits video=5` as `{ standard: 100, video: 5 }`. */
export function parseCredits(entries: readonly string[]): Record<string, number> {
  const credits: Record<string, number> = {};
  for (const entry of entries) {
    const match = /^([^=]+)=(\d+)$/.exec(entry);
    if (match?.[1] === undefined)
      throw new UsageError(`--credits takes CATEGORY=N, got "${entry}".`);
    credits[match[1]] = Number(match[2]);
  }
  return credits;
}

/**
 * The arguments with a negative number after an option joined to it (`--amount -5` becomes
 * `--amount=-5`): parseArgs takes `-5` for an option of its own and refuses the line, so the
 * value would never reach the check that explains what is wrong with it.
 */
export function negativeValuesJoined(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.slice(2);
    const takesValue =
      Object.hasOwn(options, name) &&
      (options as Record<string, { type: string }>)[name]!.type === 'string';
    if (arg.startsWith('--') && takesValue && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}
