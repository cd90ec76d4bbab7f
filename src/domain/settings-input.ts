import { ErrorCode } from '../shared/errors.ts';

/** One thing wrong with a request; all of them are reported together. */
export interface SettingProblem {
  readonly field: string;
  readonly message: string;
  /** 120001: the value itself is invalid; 120002: the model does not support it (here). */
  readonly code: typeof ErrorCode.InvalidInput | typeof ErrorCode.UnsupportedCombination;
  readonly allowed?: unknown;
}

export type Validated<T> =
  | { readonly ok: true; readonly settings: T }
  | { readonly ok: false; readonly problems: readonly SettingProblem[] };

export const maxSeed = 2_147_483_647;

/**
 * Reads a raw generation request field by field. `raw` may come from GraphQL (typed) or
 * from JSON (`estimateCost`, MCP), so every type is checked; each problem is collected, none
 * stops the reading, and the caller reports them all at once.
 */
export class SettingsReader {
  readonly problems: SettingProblem[] = [];
  readonly #raw: Readonly<Record<string, unknown>>;

  constructor(raw: Readonly<Record<string, unknown>>) {
    this.#raw = raw;
  }

  invalid(field: string, message: string): void {
    this.problems.push({ field, message, code: ErrorCode.InvalidInput });
  }

  unsupported(field: string, message: string, allowed: unknown): void {
    this.problems.push({ field, message, code: ErrorCode.UnsupportedCombination, allowed });
  }

  string(field: string): string | undefined {
    const value = this.#raw[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value;
    this.invalid(field, 'must be a string');
    return undefined;
  }

  /** Trimmed, non-empty and at most `maxLength` characters; '' when missing or bad. */
  text(field: string, maxLength: number): string {
    const text = this.string(field)?.trim() ?? '';
    if (text.length === 0 && this.problems.every((p) => p.field !== field)) {
      this.invalid(field, 'must not be empty');
    } else if (text.length > maxLength) {
      this.invalid(field, `must be at most ${maxLength} characters`);
    }
    return text;
  }

  int(field: string, min: number, max: number): number | undefined {
    const value = this.#raw[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)
      return value;
    this.invalid(field, `must be a whole number from ${min} to ${max}`);
    return undefined;
  }

  number(field: string, min: number, max: number): number | undefined {
    const value = this.#raw[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max)
      return value;
    this.invalid(field, `must be a number from ${min} to ${max}`);
    return undefined;
  }

  id(field: string): string | undefined {
    const value = this.string(field);
    if (value === undefined) return undefined;
    if (value.length > 0 && value.length <= 64) return value;
    this.invalid(field, 'must be an ID');
    return undefined;
  }

  idList(field: string): string[] {
    const value = this.#raw[field];
    if (value === undefined || value === null) return [];
    if (
      Array.isArray(value) &&
      value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 64)
    ) {
      return [...new Set(value as string[])];
    }
    this.invalid(field, 'must be a list of IDs');
    return [];
  }

  seed(randomSeed: () => number): number {
    return this.int('seed', 0, maxSeed) ?? randomSeed();
  }

  /** The result: the settings when nothing was wrong. */
  result<T>(settings: () => T): Validated<T> {
    return this.problems.length > 0
      ? { ok: false, problems: this.problems }
      : { ok: true, settings: settings() };
  }
}
