/**
 * The one error type a client can see. Every edge (GraphQL, WebSocket, MCP, CLI) maps it to its
 * own vocabulary by `code`; nothing ever switches on the message.
 */

/** The error catalogue of docs/errors.md, shared by every surface. */
export const ErrorCode = {
  Unauthenticated: '100101',
  IdentityUnavailable: '100102',
  Forbidden: '110202',
  AccountDeleted: '110206',
  InvalidInput: '120001',
  UnsupportedCombination: '120002',
  IdempotencyConflict: '120003',
  InsufficientCredits: '130001',
  NotFound: '140004',
  RateLimited: '150029',
  QueryTooLarge: '150030',
  GenerationPending: '160001',
  GenerationFailed: '160002',
  Internal: '190000',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Codes where the very same request may succeed later without any change by the client. */
const retryableCodes: ReadonlySet<ErrorCode> = new Set([
  ErrorCode.IdentityUnavailable,
  ErrorCode.RateLimited,
  ErrorCode.Internal,
]);

/** Extra, machine-readable facts about an error (`field`, `required`, `available`…). */
export type ErrorDetails = Readonly<Record<string, unknown>>;

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  get retryable(): boolean {
    return retryableCodes.has(this.code);
  }
}

/** One violation of an input rule; several are reported together (DESIGN.md rule 7). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** A 120001 error naming the first field, with every problem listed in `details.problems`. */
export function invalidInput(problems: readonly FieldProblem[]): AppError {
  const [first] = problems;
  if (first === undefined) throw new TypeError('invalidInput needs at least one problem');
  const message = problems.map((p) => `${p.field}: ${p.message}`).join('; ');
  return new AppError(ErrorCode.InvalidInput, message, { field: first.field, problems });
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
