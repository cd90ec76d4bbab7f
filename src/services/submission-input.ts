import { createHash, randomInt } from 'node:crypto';
import { commonFields, maxSeed, type Validated } from '../domain/kinds/fields.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';

// A submission's own fields, checked before anything is read or charged, and the input's
// hash that tells a retry (same idempotency key, same input) from a conflict.

const maxIdempotencyKeyLength = commonFields.idempotencyKey.maxLength;

/** The settings, or the problems as one error: 120001 if any value is invalid, else 120002. */
export function settled<T>(result: Validated<T>): T {
  if (result.ok) return result.settings;
  const code = result.problems.some((p) => p.code === ErrorCode.InvalidInput)
    ? ErrorCode.InvalidInput
    : ErrorCode.UnsupportedCombination;
  const first = result.problems.find((p) => p.code === code)!;
  const message = result.problems.map((p) => `${p.field}: ${p.message}`).join('; ');
  throw new AppError(code, message, {
    field: first.field,
    ...(first.allowed === undefined ? {} : { allowed: first.allowed }),
    problems: result.problems,
  });
}

export function newSeed(): number {
  return randomInt(maxSeed);
}

export function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw invalidInput([{ field, message: 'is required' }]);
  return value;
}

export function optionalString(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0)
    throw invalidInput([{ field, message: 'must be a non-empty string' }]);
  return value;
}

export function optionalMaxCredits(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const { min, max } = commonFields.maxCredits;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidInput([
      { field: 'maxCredits', message: `must be a whole number from ${min} to ${max}` },
    ]);
  }
  return value;
}

export function optionalKey(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > maxIdempotencyKeyLength) {
    throw invalidInput([
      { field: 'idempotencyKey', message: `must be 1 to ${maxIdempotencyKeyLength} characters` },
    ]);
  }
  return value;
}

/** Fields that are about the request, not the generation: a retry may change them. */
const unhashed = new Set(['idempotencyKey', 'maxCredits', 'webhookUrl']);

/** The client's input, canonical (sorted keys, no nulls, no idempotency key or cap), hashed. */
export function hashInput(input: Readonly<Record<string, unknown>>): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(
        Object.entries(value)
          .filter(([key, v]) => v !== null && v !== undefined && !unhashed.has(key))
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([key, v]) => [key, canonical(v)]),
      );
    }
    return value;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(input)))
    .digest('hex');
}
