import { ErrorCode } from '../../shared/errors.ts';
import { maxBalance } from '../credits.ts';

/**
 * The wire type of one input field. Edges map it to their own types (GraphQL `ID`, `String`,
 * `Int`, `Float`, `[ID!]`; JSON Schema string, integer, number, array of strings); every
 * domain rule beyond the type (ranges, lengths, allowed values) is checked by the reader below,
 * so each edge answers it with the same catalogue code.
 */
export type FieldType = 'id' | 'string' | 'int' | 'float' | 'idList';

/** One input field of a generation kind, declared once for every edge. */
export interface FieldSpec {
  readonly type: FieldType;
  /** Required on the wire: non-null in GraphQL, a required argument over MCP. */
  readonly required?: boolean;
  /**
   * The value a left-out field takes. GraphQL shows it in the schema (`count: Int = 1`) and
   * fills it in; the service applies it too, and hashes the input with it (idempotency keys
   * mean the same over every edge).
   */
  readonly default?: number;
  /** Inclusive bounds of a number. */
  readonly min?: number;
  readonly max?: number;
  /** Longest string; a model's own limit (e.g. prompt length) is checked against the model. */
  readonly maxLength?: number;
  readonly description?: string;
}

export type FieldTable = Readonly<Record<string, FieldSpec>>;

/** The largest seed: a non-negative 32-bit integer, GraphQL's `Int` range. */
export const maxSeed = 2_147_483_647;

/** Fields every kind shares, around its own: the model first, the idempotency key last. */
export const commonFields = {
  modelId: {
    type: 'id',
    required: true,
    description: 'A ready model of this kind, from the model list.',
  },
  idempotencyKey: {
    type: 'string',
    maxLength: 200,
    description:
      'Same key, same account: the first submission is returned and nothing is charged twice.',
  },
  webhookUrl: {
    type: 'string',
    maxLength: 2_000,
    description:
      'A public https URL called when the task ends, signed with the one-off secret (rotateOneOffWebhookSecret).',
  },
  maxCredits: {
    type: 'int',
    min: 0,
    max: maxBalance,
    description:
      'The most this generation may cost: a higher price is refused (130001) and nothing is charged.',
  },
} as const satisfies FieldTable;

/** The seed field, the same wherever a kind takes one. */
export const seedField = {
  type: 'int',
  min: 0,
  max: maxSeed,
  description: 'Makes the result reproducible; random when left out.',
} as const satisfies FieldSpec;

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

const maxIdLength = 64;

/**
 * Reads a raw generation request field by field, by the kind's field table. `raw` may come
 * from GraphQL (typed) or from JSON (`estimateCost`, MCP), so every type is checked; a field
 * the kind does not declare is a problem too. Each problem is collected, none stops the
 * reading, and the caller reports them all at once.
 */
export class SettingsReader<F extends FieldTable> {
  readonly problems: SettingProblem[] = [];
  readonly #raw: Readonly<Record<string, unknown>>;
  readonly #fields: F;

  constructor(raw: Readonly<Record<string, unknown>>, fields: F) {
    this.#raw = raw;
    this.#fields = fields;
    const { modelId, idempotencyKey, maxCredits, webhookUrl } = commonFields;
    const known = Object.keys({ modelId, ...fields, idempotencyKey, maxCredits, webhookUrl });
    for (const key of Object.keys(raw)) {
      if (!known.includes(key) && raw[key] !== undefined && raw[key] !== null) {
        this.problems.push({
          field: key,
          message: 'is not a field of this kind of generation',
          code: ErrorCode.InvalidInput,
          allowed: known,
        });
      }
    }
  }

  invalid(field: keyof F & string, message: string): void {
    this.problems.push({ field, message, code: ErrorCode.InvalidInput });
  }

  unsupported(field: keyof F & string, message: string, allowed: unknown): void {
    this.problems.push({ field, message, code: ErrorCode.UnsupportedCombination, allowed });
  }

  /** Whether a problem was already reported for the field. */
  has(field: keyof F & string): boolean {
    return this.problems.some((p) => p.field === field);
  }

  string(field: keyof F & string): string | undefined {
    const value = this.#raw[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value;
    this.invalid(field, 'must be a string');
    return undefined;
  }

  /** Trimmed, non-empty and at most `maxLength` characters (the model's); '' when missing or bad. */
  text(field: keyof F & string, maxLength: number): string {
    const text = this.string(field)?.trim() ?? '';
    if (text.length === 0 && !this.has(field)) {
      this.invalid(field, 'must not be empty');
    } else if (text.length > maxLength) {
      this.invalid(field, `must be at most ${maxLength} characters`);
    }
    return text;
  }

  /** A whole number within the field's declared bounds. */
  int(field: keyof F & string): number | undefined {
    const value = this.#raw[field];
    if (value === undefined || value === null) return this.#fields[field]?.default;
    const { min, max } = this.#bounds(field);
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)
      return value;
    this.invalid(field, `must be a whole number from ${min} to ${max}`);
    return undefined;
  }

  /** A number within the field's declared bounds. */
  number(field: keyof F & string): number | undefined {
    const value = this.#raw[field];
    if (value === undefined || value === null) return this.#fields[field]?.default;
    const { min, max } = this.#bounds(field);
    if (typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max)
      return value;
    this.invalid(field, `must be a number from ${min} to ${max}`);
    return undefined;
  }

  id(field: keyof F & string): string | undefined {
    const value = this.string(field);
    if (value === undefined) return undefined;
    if (value.length > 0 && value.length <= maxIdLength) return value;
    this.invalid(field, 'must be an ID');
    return undefined;
  }

  /** An ID the request must give. */
  requiredId(field: keyof F & string): string | undefined {
    const value = this.id(field);
    if (value === undefined && !this.has(field)) this.invalid(field, 'is required');
    return value;
  }

  idList(field: keyof F & string): string[] {
    const value = this.#raw[field];
    if (value === undefined || value === null) return [];
    if (
      Array.isArray(value) &&
      value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= maxIdLength)
    ) {
      return [...new Set(value as string[])];
    }
    this.invalid(field, 'must be a list of IDs');
    return [];
  }

  /** The result: the settings when nothing was wrong. */
  result<T>(settings: () => T): Validated<T> {
    return this.problems.length > 0
      ? { ok: false, problems: this.problems }
      : { ok: true, settings: settings() };
  }

  #bounds(field: keyof F & string): { min: number; max: number } {
    const spec = this.#fields[field];
    return { min: spec?.min ?? -Infinity, max: spec?.max ?? Infinity };
  }
}
