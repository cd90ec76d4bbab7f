import { type FieldProblem, invalidInput } from './errors.ts';

/**
 * Why a piece of client text cannot be accepted, or null when it can. PostgreSQL refuses the
 * NUL character in `text` and `jsonb` (an internal error if it ever got that far), and an
 * unpaired UTF-16 surrogate has no UTF-8 encoding; neither has any use in a prompt, a name or a
 * key, so every edge refuses both as invalid input (120001) before anything else runs.
 */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'must not contain an unpaired UTF-16 surrogate';
  return null;
}

/**
 * The first string in `value` — a string itself, or any string or key nested in its objects
 * and arrays — that `textProblem` refuses, named by its path (`input.prompt`,
 * `elementIds[2]`); null when there is none. Binary bodies (buffers) are not text.
 */
export function findTextProblem(value: unknown, path: string): FieldProblem | null {
  if (typeof value === 'string') {
    const message = textProblem(value);
    return message === null ? null : { field: path, message };
  }
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findTextProblem(item, `${path}[${index}]`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    const field = path === '' ? printable(key) : `${path}.${printable(key)}`;
    const message = textProblem(key);
    if (message !== null) return { field, message: `key ${message}` };
    const found = findTextProblem(item, field);
    if (found !== null) return found;
  }
  return null;
}

/** Throws 120001 naming the field when `value` holds text no edge accepts. */
export function assertAcceptableText(value: unknown, path: string): void {
  const problem = findTextProblem(value, path);
  if (problem !== null) throw invalidInput([problem]);
}

/** A field name that is safe to send back even when the key itself is the problem. */
function printable(key: string): string {
  return key.toWellFormed().replaceAll('\u0000', '\uFFFD');
}
