import { AppError, ErrorCode, invalidInput } from '../../shared/errors.ts';

/** One field of an OpenAI request Atelier cannot honour as given. */
interface Problem {
  readonly field: string;
  readonly message: string;
  readonly unsupported?: { readonly allowed: unknown };
}

/**
 * Reads the body of an OpenAI request before it becomes a generation input: unknown fields
 * are refused (as OpenAI refuses them), and fields Atelier cannot honour are accepted only at
 * the value that asks for nothing (`quality: "auto"`). Every problem is collected and reported
 * at once, like the service's own validation: 120001 if a value is invalid, else 120002 with
 * `allowed`. Everything else is left to the service, which validates the input as it does for
 * GraphQL and MCP.
 */
export class RequestFields {
  readonly body: Readonly<Record<string, unknown>>;
  readonly #problems: Problem[] = [];

  constructor(body: unknown, known: readonly string[]) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalidInput([{ field: 'body', message: 'must be a JSON object' }]);
    }
    this.body = body as Record<string, unknown>;
    for (const field of Object.keys(this.body))
      if (!known.includes(field)) this.invalid(field, 'is not a parameter of this endpoint');
  }

  invalid(field: string, message: string): void {
    this.#problems.push({ field, message });
  }

  /**
   * `field` must be absent or one of `neutral` (the values that ask for nothing Atelier would
   * have to do differently).
   */
  onlyNeutral(field: string, neutral: readonly unknown[], what: string): void {
    const value = this.body[field];
    if (value === undefined || value === null || neutral.includes(value)) return;
    this.#problems.push({ field, message: what, unsupported: { allowed: neutral } });
  }

  /** Throws the problems found so far as one AppError. */
  check(): void {
    const invalid = this.#problems.filter((p) => p.unsupported === undefined);
    if (invalid.length > 0) throw invalidInput(invalid);
    const [first] = this.#problems;
    if (first === undefined) return;
    throw new AppError(
      ErrorCode.UnsupportedCombination,
      this.#problems.map((p) => `${p.field}: ${p.message}`).join('; '),
      { field: first.field, allowed: first.unsupported?.allowed },
    );
  }
}
